// Package kqueue is weft's I/O driver for macOS and the BSDs: a kqueue
// instance with edge-triggered (EV_CLEAR) read and write filters behind the
// operation-level core.Driver SPI, after Tokio's reactor (the design of
// drivers/epoll, whose readiness protocol it shares). It registers itself
// as driver "kqueue"; select it with driver.kind: kqueue or
// rt.Builder.Driver("kqueue"). It implements core.Driver, core.VectoredIO,
// core.DatagramIO and core.QuiescentDriver.
//
// It has no core.FileIO. kqueue reports a regular file as always readable
// and writable (EVFILT_READ on a vnode only compares the offset with the
// size; nothing ever waits), so a readiness driver cannot make file I/O
// asynchronous: file operations go to the runtime's blocking pool
// (package weft/lib/wfs), as with epoll.
//
// # What is verified where
//
// The module builds on every system; on systems other than darwin,
// freebsd, netbsd and openbsd the "kqueue" module is registered but
// building it fails with an error wrapping ErrUnsupported.
//
//   - Linux: the driver's logic (every file but the BSD back end,
//     sys_bsd.go, user_event.go, user_pipe.go, backlog_bsd.go, and the
//     per-system socket helpers sock_darwin.go, accept_plain.go,
//     keepalive_darwin.go and keepalive_openbsd.go) is compiled and run
//     against kqemu, an
//     emulation of kqueue on top of epoll and poll(2) (package
//     internal/kqemu, which has its own tests of every kevent behaviour it
//     claims). Built with NewEmulated, the driver passes the whole driver
//     conformance suite (conformance.Driver) on the current-thread
//     and the work-stealing schedulers with EVFILT_USER for Unpark, and
//     on the work-stealing scheduler with the pipe, under the race
//     detector (those runs are in the integration module, which links
//     the schedulers).
//   - darwin/amd64, darwin/arm64, freebsd/amd64, netbsd/amd64,
//     openbsd/amd64: the package and its tests, and the integration
//     module's conformance tests against the real kqueue, are
//     cross-compiled and vetted (crossbuild.sh), not run. Behaviour on a real kernel is
//     therefore unverified; the places where the real kernels may differ
//     from the emulation are the kernels' EV_EOF/fflags reporting and the
//     per-system socket helpers (accept, socket flags, keep-alive).
//
// # System calls behind an interface
//
// The event queue is reached through kqueueSys (kevent, closing a
// descriptor, closing the queue): the real kqueue(2)/kevent(2) on the BSDs,
// the emulation on Linux. Socket code (socket, bind, listen, accept,
// connect, read, write, recvmsg, sendmsg, options) is one file set shared
// by every system, written against golang.org/x/sys calls that exist on
// all of them; the differences (SOCK_NONBLOCK and accept4 where they
// exist, keep-alive option names, the listen backlog sysctl, OpenBSD's
// lack of dual-stack sockets) are small per-system helpers.
//
// # Registrations and batched changes
//
// Every socket the driver creates (Listen, Bind, Connect, Accept) gets an
// EVFILT_READ and an EVFILT_WRITE knote with EV_ADD | EV_CLEAR, once, and
// they are never modified: edge-triggered in both directions, so the
// kernel reports each change and the driver remembers it. Closing a
// descriptor deletes its knotes, so CloseHandle needs no EV_DELETE.
//
// The two changes of a registration are batched. When no Park is blocked
// in kevent, they are queued and the next Park submits every queued change
// in its own kevent call, which also returns the events already pending: a
// registration then costs no system call of its own. Nothing is lost by
// the delay, because the kernel evaluates a filter when it is added and
// reports a descriptor that is already ready. When a Park is blocked, it
// would see queued changes only after it returned, so the registering
// goroutine submits the two changes itself, in one call; a knote that is
// active when added wakes the blocked Park. Park moves to its blocking
// state under the same lock register decides under, after taking every
// queued change, so a change is always either taken by a Park or
// submitted at once.
//
// A Park submits its batch in a kevent call that does not wait, holding
// the lock CloseHandle takes to drop the queued changes of a descriptor it
// closes: a descriptor whose change is in flight is not closed (and its
// number not reused by an unrelated open) until the kernel has applied it.
// If the batch yields no event, Park then waits in a second call without
// changes.
//
// # Events, EV_EOF and EV_ERROR
//
// The event buffer has DriverParams.Events entries (1024 by default). A
// kevent names its descriptor (ident), so the driver's table of
// registrations is indexed by descriptor number; a handle is
//
//	generation (32 bits) | descriptor + 1 (32 bits)
//
// and the generation moves on when the handle is closed, so a stale handle
// never reaches a later registration of the same number (see drivers/internal/slab).
//
// EVFILT_READ sets readable, EVFILT_WRITE writable. EV_EOF on the read
// filter adds read-closed (the peer sends no more: reads see the end of
// the stream without waiting for an edge that will not come again), on the
// write filter write-closed; a non-zero fflags with EV_EOF is the socket's
// pending error and makes both directions try their system call, which
// reports it. The errors operations return are those of the system calls,
// *os.SyscallError wrapping syscall.Errno (ECONNRESET, ECONNREFUSED,
// EPIPE, EADDRINUSE...), io.EOF at the end of a stream and net.ErrClosed
// for a closed handle, so they match Go's values under errors.Is.
//
// An EV_ERROR entry answers a change the kernel refused, with the errno in
// data. A direct submission (register while a Park waits) passes no event
// list, so the refusal is the call's error and register returns it as an
// *os.SyscallError("kevent", errno). For a change submitted by Park the
// registration is marked failed: its pending and later operations fail
// with *os.SyscallError("kevent", errno).
//
// # The readiness word and waiters
//
// The per-descriptor state is readiness.IO, shared with drivers/epoll (Tokio's
// ScheduledIo): a readiness word stamped with the driver's tick, which
// advances once per Park, so that an operation that got EAGAIN clears
// only the readiness it observed and never an edge that arrived after its
// system call (with EV_CLEAR no further edge would come, and the operation
// would wait for ever); and a list of waiters, one per pending operation,
// linked under a mutex the driver takes after setting readiness, so no
// wake is lost. The protocols are documented in drivers/internal/readiness.
//
// # Parking
//
// Park(timeout) submits queued changes, then waits in kevent with the
// timeout as a timespec (nil when negative), advances the tick, sets
// readiness and collects wakers, then wakes them. Unpark triggers an
// EVFILT_USER event (ident 0, EV_CLEAR, NOTE_TRIGGER) on darwin and
// freebsd; golang.org/x/sys has no EVFILT_USER for netbsd (which gained it
// only in NetBSD 10) or openbsd, so there Unpark writes a byte to a pipe
// whose read end is registered with EVFILT_READ | EV_CLEAR. As in the
// epoll driver, an Unpark while Park is dispatching costs nothing, a burst
// of Unparks costs one system call (unparkPending), and Park passes
// through Go's scheduler every few milliseconds so that sysmon does not
// take the P of a worker blocked in kevent. Park calls are serialised.
//
// # Closing
//
// CloseHandle unregisters the handle, sets its closed bit, wakes every
// waiter, drops its queued changes and closes the descriptor once no
// system call in flight uses it (readiness.FD). The socket file of a Unix
// listener is removed. Close waits for a Park in progress, fails every
// pending operation with an error matching core.ErrDriverClosed and
// net.ErrClosed, closes every descriptor, the pipe, and the event queue
// (once no Unpark is using it).
package kqueue
