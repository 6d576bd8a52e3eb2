// Package iouring is weft's Linux io_uring driver: a completion driver
// behind the operation-level core.Driver SPI, written without cgo on
// golang.org/x/sys raw system calls (io_uring_setup, io_uring_enter,
// io_uring_register). It registers itself as driver "iouring"; select it
// with driver.kind: iouring or rt.Builder.Driver("iouring"). It implements
// core.Driver, core.VectoredIO, core.DatagramIO and core.FileIO (files go
// through the ring, not the blocking pool). Probe reports what the
// kernel's io_uring supports.
//
// # Set-up
//
// New calls io_uring_setup with the configured number of SQ entries
// (IORING_SETUP_CLAMP; the CQ is twice as large) and maps the SQ ring, the
// CQ ring and the SQE array (one mapping for both rings on kernels with
// IORING_FEAT_SINGLE_MMAP). The SQ's index array is filled once with the
// identity, so ring position i always uses SQE i. It then asks the kernel
// for its supported operations (IORING_REGISTER_PROBE) and refuses a
// kernel that lacks one the driver uses (Linux 5.6 or later is needed).
// A refusal (ENOSYS, EPERM from seccomp or kernel.io_uring_disabled, too
// old a kernel) is an error wrapping ErrUnavailable that names the cause;
// the module configuration then decides between the epoll driver, with a
// warning on the runtime's logger, and failing the runtime's build
// (driver.fallback: epoll | error). The module does not link the epoll
// driver: the fallback finds it in the registry, so a program that wants it
// imports drivers/epoll (the weft facade does), and without it the build
// fails naming driver.fallback and that import.
//
// # Operations
//
// Every operation is a future owning an op record. Its first poll submits
// the request; the reaper's completion resolves it and wakes the task.
// Sockets use RECV, SEND (with MSG_NOSIGNAL), RECVMSG/SENDMSG (vectored
// I/O and datagrams, with the peer address), ACCEPT (one connection per
// request) and CONNECT; files use OPENAT, READ and WRITE at an offset (or
// at the file position), READV/WRITEV, FSYNC and CLOSE. Listen, Bind,
// Shutdown, SetOption and the address queries are plain system calls.
// A result of EINTR or EAGAIN (and ECONNABORTED for an accept) submits the
// request again; so does ECANCELED on a request nobody cancelled, which
// the kernel does when the thread that submitted it exits.
//
// The kernel is told where to read and write by address. Go's collector
// never moves heap objects, and the driver keeps every op the kernel holds
// in its operation table, so the op and every buffer, iovec array, msghdr
// and socket address it references stay reachable until the op's final
// completion arrives, whatever became of its future. A CQE names its op by
// user_data = generation | slot, never by pointer; a slot's generation
// moves on when it is reused, so a late cancel or completion never
// reaches the wrong operation.
//
// # A ring per worker
//
// A runtime whose workers each own a driver (the percore scheduler) has
// several rings in one process, while a handle belongs to the driver that
// created it: a file opened on one worker, a connection accepted on
// another. An operation is submitted to the ring of the worker that
// first polls it (core.Context.Worker().Driver()) when that is another
// open Driver of this package, and to its handle's own ring otherwise, so
// the request runs inline on the polling worker's thread, that worker's
// Park reaps it, and the completion wakes the task on the worker that
// owns it, with no other worker involved. Descriptor numbers are
// process-wide, so any ring may name the descriptor; a handle's driver
// (its home) still registers the descriptors an accept or an open
// returns on it, and owns the close. Closing needs the one extra step: a
// descriptor may be closed only once no ring holds an unconsumed entry
// naming it, and the home's ring position says nothing of another ring.
// So a close that fails an operation held by another ring cancels it in
// that ring and waits until that ring has consumed everything published
// so far (the entry and the cancel), and a Drop of such an operation does
// the same before it removes the operation from its handle's list.
// Closing a ring fails the operations other drivers' handles submitted
// to it with core.ErrDriverClosed and cancels them; their handles stay
// open. With one driver shared by every worker nothing of this applies.
//
// # Submission: concurrent, batched
//
// Operations may be submitted from any goroutine (a work-stealing
// runtime shares one driver among its workers), so the SQ is guarded by a
// mutex (sqMu): a submitter fills an SQE and publishes the tail with a
// release store, and nothing more. Entries accumulate and reach the
// kernel in batches:
//
//   - Park submits everything queued and waits for completions in one
//     io_uring_enter (to_submit = the queued entries, GETEVENTS);
//   - a Park with a zero timeout (a busy worker's periodic driver poll)
//     submits with one enter and reaps without blocking;
//   - a full SQ makes the submitter flush it (or, under SQPOLL, wait for
//     the kernel thread with IORING_ENTER_SQ_WAIT) and retry: an operation
//     is never dropped.
//
// One case needs more. While a Park is blocked in io_uring_enter it will
// not submit entries published after it entered, and on a work-stealing
// runtime the other worker keeps submitting. Park stores parkWaiting
// under sqMu after it has counted the queued entries; a submitter that
// then finds parkWaiting (also under sqMu) submits the SQ itself
// (io_uring_enter without GETEVENTS) after releasing its locks:
//
//	Park                                   submitter
//	lock sqMu; n := queued;                lock sqMu; fill SQE; publish
//	state = waiting; unlock sqMu           flush := state == waiting
//	io_uring_enter(n, GETEVENTS)           unlock sqMu
//	                                       flush? io_uring_enter(queued, 0)
//
// The submitter's entry is either counted by the Park or submitted by the
// submitter. Several enters may run at once: the kernel serialises
// submission, and to_submit only bounds how many published entries one
// call takes. Under SQPOLL a submitter only wakes the kernel thread when
// it sleeps (IORING_SQ_NEED_WAKEUP).
//
// # Completion
//
// Park (serialised by parkMu) reaps: it copies every CQE out, releases the
// CQ head at once, resolves the batch's user_data under one sqMu section,
// then completes each op under the op's own mutex and wakes the tasks.
// CQEs in the kernel's overflow list (IORING_FEAT_NODROP) are brought in
// with a GETEVENTS enter. Timeouts: with IORING_FEAT_EXT_ARG (5.11+) the
// bound of a wait is passed to io_uring_enter; otherwise Park queues an
// IORING_OP_TIMEOUT with a completion count of one, which completes when
// the time passes or when any other completion arrives, so it never
// outlives the wait it bounds. Before a blocking wait Park passes through
// Go's scheduler every 8 ms, as the epoll driver does and for its reason.
//
// # Unpark
//
// Unpark posts an IORING_OP_NOP to the ring itself: its completion ends a
// blocked wait. No eventfd is needed (an eventfd would need a read request
// re-armed after every wake and a descriptor of its own), and the NOP's
// enter also submits whatever else is queued. It costs that enter only
// when a Park is actually blocked:
//
//   - Unpark sets wakeFlag, then loads the state; Park stores
//     parkWaiting, then swaps wakeFlag off and does not block if it was
//     set. One of the two sees the other, so a wake before the Park
//     blocks makes it poll, and a wake after finds it waiting.
//   - While a Park is dispatching, Unpark does nothing: that Park is about
//     to return and its caller re-checks the queues the unparker published
//     to before calling Unpark.
//   - At most one NOP is outstanding (nopInFlight, cleared when it is
//     reaped): it ends whichever Park is blocked, so a burst of Unparks
//     costs one enter.
//
// An MSG_RING from another ring would need a ring per waker; a NOP on the
// driver's own ring is the same thing without one.
//
// # Cancellation
//
// An op's state is guarded by its mutex: inFlight (the kernel holds it),
// ready (a result awaits the future), taken (the future resolved or was
// dropped), abandoned (the kernel's result belongs to nobody). Dropping a
// pending future takes it; if the kernel holds the op, an
// IORING_OP_ASYNC_CANCEL naming its user_data is queued (and submitted at
// once if a Park is blocked). The races, each tested:
//
//   - dropped before the kernel completes: the cancel removes the request
//     (its CQE says ECANCELED); nothing was done;
//   - dropped with the completion already in the CQ but not reaped: the
//     cancel finds nothing (ENOENT) and the result is disposed of (below);
//   - dropped after the completion was reaped but before the future took
//     it: Drop disposes of the result itself.
//
// What disposing means depends on the operation. An accepted or opened
// descriptor is closed. A stream read's bytes (and a failure after them)
// were consumed from the socket, and a completion driver cannot give them
// back, so they are kept for the next read on the handle: an abandoned
// read never loses a byte. A write's bytes went out; a Drop cannot report
// them, which is why writes are also cancelled another way (below).
//
// # Reads are cancel-safe
//
// A readiness driver is cancel-safe for reads by construction: the read
// system call happens inside Poll, so a dropped read never took anything.
// Here the kernel reads on the future's behalf, into the caller's buffer,
// at any moment until the cancel is processed. Two designs keep those
// bytes. Reading into a buffer of the driver's and copying at completion
// would cost a copy and a buffer per read on every read, to serve the
// rare one that is dropped. Readiness first (IORING_OP_POLL_ADD, then a
// recv in Poll) would cost a second request or system call per read that
// waits. Instead the dropped read settles, which costs only the Drop:
//
//   - Drop of a stream read the kernel holds (recv, or recvmsg into
//     several buffers, on a stream socket) does not abandon the op: it
//     queues the cancel and waits until the op's final completion has
//     been reaped (settle). The cancel of a request waiting for socket
//     readiness completes at once, so the wait is short; whoever holds
//     parkMu reaps, and a settle that cannot take it waits for the op's
//     completion or for the holder to release it (releasePark), never for
//     the next Park, which a busy worker may not call for a while.
//   - Once settled, the kernel no longer writes the caller's buffer, and
//     Drop has not yet returned, so the buffer still holds what the
//     request received: Drop copies it into the handle's kept results
//     (the only copy, made for dropped reads only).
//   - A stream read's first poll (arm, under the handle's lock) takes the
//     kept results, oldest first, before anything is submitted: as many
//     bytes as its buffers hold, then on a later read a kept failure. So
//     a reader that drops a read and reads again gets every byte once and
//     in order. With several reads in flight on one stream at once, no
//     driver orders the bytes among them; here, when results are kept,
//     the other reads the kernel holds are cancelled and start again from
//     the kept results, so that none waits for new bytes while older ones
//     are kept.
//   - CloseHandle discards the kept results with the handle.
//
// A settled read's buffer is not written after its Drop returns, which
// the core.Driver contract promises for every read. Dropped file and
// datagram reads are still abandoned: the kernel may write their buffer
// until the cancel is processed (a file read running in a kernel worker
// cannot be interrupted and may finish into it), and a datagram that
// completes a dropped receive is discarded, as UDP may lose it anyway.
// The buffer stays reachable until the kernel's completion. A dropped
// op's waker is never woken. A CLOSE is never cancelled.
//
// # Writes report what they wrote
//
// A write the kernel holds may have sent a prefix of its buffer, or all
// of it, by the time it is abandoned; nothing can take those bytes back.
// So the writes' futures are weft/lib/wio Cancellers: Cancel queues the
// ASYNC_CANCEL and leaves the op to its future, which resolves to what
// the kernel did before the cancel reached it (the bytes written) or to
// ECANCELED if it wrote nothing, and never submits the op again. The
// deadlines of weft/lib/wio.Timeout and of weft/lib/co's Conn cancel a
// write this way and report the count it wrote, as Go's net.Conn does.
// A plain Drop of a pending write (a select's loser) cancels it unseen:
// it may have written a prefix, which the dropper cannot learn. The
// readiness drivers write inside Poll, so a dropped write of theirs wrote
// nothing, and the plugin driver's stream writes resolve as soon as the
// driver has taken their bytes.
//
// # Closing
//
// CloseHandle removes the handle, fails every operation outstanding on it
// with net.ErrClosed (a completed but untaken accept's connection is
// closed), cancels those the kernel holds and closes the descriptor once
// the kernel has consumed every queued entry naming it: an entry carries
// only a descriptor number until the kernel reads it, and closing first
// would let a new socket take that number. The record's mutex is held
// while an operation is submitted on it, so no entry naming the
// descriptor is queued after the close. Requests the kernel already
// holds keep their own file reference and end with the cancel. CloseFile
// does the same but closes the descriptor with an IORING_OP_CLOSE queued
// behind those entries, whose completion resolves its future.
//
// Close fails every pending operation with an error matching
// core.ErrDriverClosed and net.ErrClosed, cancels everything in flight,
// waits for those completions (at most 5 s; records still held after that
// are kept reachable for good), closes every descriptor the driver issued
// and unmaps the ring. A read-write lock on the ring keeps a submitter's
// concurrent enter from reaching a closed ring descriptor.
//
// # Options not offered
//
// IORING_SETUP_SINGLE_ISSUER and DEFER_TASKRUN bind a ring to the one
// kernel task (OS thread) that submits. Go moves goroutines between
// threads, and several workers (and Unpark from any goroutine) submit to
// a shared driver, so neither fits this driver's threading model; nor
// does COOP_TASKRUN, which leaves completions to the submitting thread's
// next system call while that thread may sleep in Go's scheduler.
// Multishot accept and provided buffer rings are not used (yet): one
// request per Accept and reads into the caller's buffer keep the
// semantics of the other drivers (a connection is accepted only when
// asked for; a read's bytes land where asked, with no copy), and on the
// echo and file workloads measured here (BENCHMARKS.md in this
// directory) the per-operation cost is mostly the kernel's work and the
// runtime above the driver, not the requests those features would save.
package iouring
