// Package epoll is weft's Linux I/O driver: an edge-triggered epoll
// instance behind the operation-level core.Driver SPI, after Tokio's
// reactor (the seeds' ScheduledIo design). It registers itself as driver
// "epoll"; select it with driver.kind: epoll or rt.Builder.Driver("epoll").
// It implements core.Driver, core.VectoredIO and core.DatagramIO. It has no
// core.FileIO: regular files are always "ready" to epoll, so file I/O goes
// to the runtime's blocking pool (package weft/lib/wfs).
//
// The package builds everywhere; on systems other than Linux the module is
// registered but building it fails with an error wrapping ErrUnsupported.
//
// # Handles and registrations
//
// Every socket the driver creates (Listen, Bind, Connect, Accept) is
// registered once with EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET and never
// modified: edge-triggered for both directions, so the kernel reports each
// change and the driver remembers it. A connecting socket is registered
// after connect(2), not before: an unconnected TCP socket polls as hung up,
// and a Park on another worker in between would record that hang-up. The driver's state for a descriptor
// is a readiness.IO (Tokio's ScheduledIo, in drivers/internal/readiness,
// shared with drivers/kqueue), kept in a slab of pages that
// never move. A handle, which is also the descriptor's epoll token, is
//
//	generation (32 bits) | slot + 1 (32 bits)
//
// so neither a stale handle nor a stale event ever reaches the
// registration that reused its slot: the generation check fails and the
// operation reports net.ErrClosed (or the event is ignored). Lookups take
// no lock.
//
// # The readiness word
//
// An IO's readiness is one atomic word:
//
//	| shutdown | closed | (unused) | tick (16) | readiness (16) |
//	   bit 63    bit 62               bits 16-31   bits 0-15
//
// The readiness bits are readable, writable, read-closed, write-closed and
// error. Park ORs what an event reports into the word and stamps it with
// the driver's tick, which advances once per Park. An operation loads the
// word; if it intersects the operation's interest it makes its system
// call, and on EAGAIN hands the event it observed back to clearReadiness:
//
//	operation                              driver (Park)
//	ev := load()          tick t, readable
//	read() -> EAGAIN
//	                                       new bytes arrive: set readable,
//	                                       tick t+1, wake waiters
//	clearReadiness(ev)    tick is t+1, not t: keep the bit
//	load() -> readable    read again, get the bytes
//
// Clearing only when the tick still matches is what makes the race
// harmless: without the tick, the clear would erase the newer edge, and
// with edge-triggered epoll no other edge would come, so the operation
// would wait for ever (the deadlock described in Tokio's
// reactor-refactor.md). Readiness is a hint: a spurious one costs one
// EAGAIN.
//
// Two kinds of clear use the same tick check. After EAGAIN the operation
// clears everything it observed, closed and error bits included (EAGAIN
// proves the direction open and merely empty or full). After a short
// transfer on a stream (a read that did not fill its buffer drained the
// socket; a write that did not empty its buffer filled the socket's), it
// clears only readable or writable, saving the EAGAIN call that would
// follow, as Tokio does, but keeps a hang-up: the next read must see the
// end of the stream without waiting for an edge that will not come again.
//
// Accepted sockets start readable and writable (Tokio's assume-ready): the
// client's first bytes are usually there already, and waiting for their
// event would queue the new connection behind every established one.
//
// The closed bit is set by CloseHandle and the shutdown bit by Close; an
// operation that sees either fails with net.ErrClosed (wrapped with
// core.ErrDriverClosed for the latter).
//
// # Waiters
//
// An operation that finds no readiness links a waiter into its
// IO's list. The waiter lives inside the operation's future, so
// any number of operations can wait in each direction (several readers and
// writers on one socket) and dropping a future unlinks exactly its waiter:
// a dropped operation never wakes its task and leaves nothing behind.
//
// The list is guarded by a mutex; the readiness word is not. They are
// ordered like this:
//
//	operation (pollReady)                  driver (Park)
//	load word: not ready                   setReadiness (CAS on the word)
//	lock                                   lock
//	load word again: ready? unlock, go     unlink matching waiters,
//	link waiter with the task's waker        take their wakers
//	unlock                                 unlock; wake them
//
// Either the driver's lock comes after the operation's unlock, and it finds
// the waiter, or it comes before the operation's lock, and the second load
// (after the driver's CAS in the atomics' order) sees the readiness. A
// waker is never lost.
//
// # Parking
//
// Park(timeout) calls epoll_wait with an event buffer of DriverParams.Events
// entries (1024 by default), rounds the timeout up to whole milliseconds so
// it never returns before a timer deadline, advances the tick, sets
// readiness and collects wakers, then wakes them. Unpark writes the
// driver's eventfd, registered with token 0. Two shortcuts keep Unpark
// cheap:
//
//   - While Park is dispatching events it returns without a system call:
//     that Park is about to return, and the caller re-checks its queues
//     after it does (the unparker published its work before calling
//     Unpark, so the re-check sees it). This makes the wakes a Park issues
//     itself free, though the scheduler thinks it is still parked.
//   - Otherwise an unparkPending flag collapses a burst of Unparks into one
//     eventfd write. Park clears the flag before it drains the eventfd, so
//     an Unpark racing with the drain writes again and is not lost.
//
// Before it blocks, Park passes through Go's scheduler (runtime.Gosched)
// if it has not for 8 ms. A worker's loop never returns to Go's scheduler,
// and Go's sysmon takes the P of a goroutine that has gone 10 ms without
// being rescheduled whenever it finds it in a system call; parked in
// epoll_wait, the worker would lose its P on nearly every park.
//
// The non-blocking reads and writes are made with RawSyscall (no
// entersyscall/exitsyscall); they cannot block, every descriptor being
// non-blocking. epoll_wait, which can, goes through the ordinary path.
//
// Park calls are serialised; the driver is safe to use from any number of
// goroutines (operations on one goroutine, Park on another: the layout of a
// work-stealing scheduler with one shared driver).
//
// # Closing
//
// CloseHandle unregisters the handle (its slot's generation moves on), sets
// the closed bit, wakes every waiter, removes the descriptor from epoll and
// closes it. A system call in flight on another goroutine keeps the
// descriptor open until it returns (a small reference count, see readiness.FD), so
// a close never lets a concurrent call act on a reused descriptor number.
// The socket file of a Unix listener is removed, as Go's net does.
//
// Close (the runtime shutting down) waits for a Park in progress, fails
// every pending operation with an error matching core.ErrDriverClosed and
// net.ErrClosed, closes every descriptor the driver still holds, then its
// eventfd and epoll instance. No descriptor outlives the driver.
//
// # Errors
//
// System call failures are *os.SyscallError values wrapping syscall.Errno
// (ECONNRESET, ECONNREFUSED, EPIPE, EADDRINUSE, ...); the end of a stream
// is io.EOF; a closed handle is net.ErrClosed. Package weft/lib/wnet wraps
// them in *net.OpError as Go's net does.
package epoll
