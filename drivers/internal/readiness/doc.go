// Package readiness is the core that weft's readiness-based drivers
// (drivers/epoll and drivers/kqueue) share: the per-descriptor state
// Tokio calls ScheduledIo (IO), the waiter lists of pending operations,
// the reference count that keeps a descriptor open under a system call
// (FD), and the futures of the core.Driver operations built on them
// (Read, Write, Readv, Writev, Accept, RecvFrom, SendTo, Connect). What
// differs between the drivers, how a descriptor is registered with the
// kernel and how the kernel's events become readiness bits, stays in the
// driver, behind the Registry interface and IO.SetReadiness.
//
// # The readiness word
//
// An IO's readiness is one atomic word:
//
//	| shutdown | closed | failed | (unused) | tick (16) | readiness (16) |
//	   bit 63    bit 62   bit 61               bits 16-31   bits 0-15
//
// The readiness bits are Readable, Writable, ReadClosed, WriteClosed and
// Errored. The driver's Park ORs what an event reports into the word with
// SetReadiness and stamps it with its tick, which advances once per Park.
// An operation loads the word (PollReady); if it intersects the
// operation's interest it makes its system call, and on EAGAIN hands the
// Event it observed back to ClearReadiness, which clears only if the tick
// is still the one it observed. An edge that arrived between the system
// call and the clear has moved the tick on and is kept: with
// edge-triggered notification no other edge would come, and the operation
// would wait for ever. Readiness is a hint: a spurious one costs one
// EAGAIN. After EAGAIN the operation clears everything it observed, closed
// and error bits included; after a short transfer on a stream it clears
// only Readable and Writable, keeping a hang-up so the next read sees the
// end of the stream at once.
//
// The closed bit (MarkClosed, CloseHandle), the shutdown bit
// (MarkShutdown, the driver's Close) and the failed bit (MarkFailed, a
// registration the kernel refused) are never cleared; an operation that
// sees one fails with ErrClosed, ErrDriverClosed or the registration's
// error.
//
// # Waiters
//
// An operation that finds no readiness links a Waiter, which lives inside
// its future, into the IO's list under the IO's mutex, after loading the
// word again under it. The driver takes the same mutex after setting
// readiness to collect the wakers of matching waiters (Wake). Either the
// driver's lock comes after the operation's unlock, and it finds the
// waiter, or it comes before the operation's lock, and the second load
// sees the readiness: a wake is never lost. Dropping a future unlinks
// exactly its own waiter.
//
// # Closing a descriptor
//
// FD counts the system calls in flight on a descriptor; closing the handle
// marks it closing, and whoever takes the count to "closing, no calls"
// closes it, exactly once. So a close never lets a concurrent call act on
// a descriptor number the kernel has reused.
//
// The package builds on Linux, darwin, FreeBSD, NetBSD and OpenBSD. On
// Linux the reads and writes are raw system calls (they cannot block: the
// descriptors are non-blocking) and vectored I/O is readv/writev; on the
// BSDs they are ordinary calls and recvmsg/sendmsg.
package readiness
