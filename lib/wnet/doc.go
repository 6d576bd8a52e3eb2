// Package wnet is weft's networking: TCP listeners and streams, UDP sockets,
// and Unix stream and datagram sockets, whose operations are futures run by
// weft's schedulers and I/O drivers instead of Go's netpoller.
//
// Import it under another name when the standard library's net is in
// scope too:
//
//	import "github.com/weftrt/weft/lib/wnet"
//
// # Which driver
//
// Sockets are built on whatever [core.Driver] the runtime has, reached
// through the task's Context (cx.Worker().Driver()), so they work with any
// driver module: epoll, io_uring, kqueue, a simulator, a plugin. A socket
// remembers the driver it was created on and always uses it, which keeps a
// handle with the driver that issued it even under a thread-per-core
// scheduler that has one driver per worker. A runtime composed with
// driver.kind "none" has no driver: creating a socket then fails with
// [ErrNoDriver].
//
// Creating a listener or a socket is synchronous and needs a Context, so
// it happens inside a task:
//
//	ln, err := wnet.ListenTCP(cx, "tcp", "127.0.0.1:8080")
//
// From outside the runtime (in main, before serving), [OnRuntime] runs
// such a function on one of the runtime's workers and returns its result.
// Connecting is a future ([DialTCP], [DialUnix]), like every operation that
// may wait.
//
// # Operations
//
// Read, Write, Accept, RecvFrom, SendTo and the rest return futures
// (package weft/lib/wio explains the contract: short reads and writes,
// io.EOF, buffers owned by the operation until it resolves). Any number of
// operations may be pending on one socket at once, in either direction:
// one task can read while another writes, with no lock and no Split
// needed. Dropping a pending operation ([core.Drop]) cancels it.
//
// Several tasks may also read one stream at once, or write it: each Read
// future, wio.Copy, and Conn of package weft/lib/co has an operation of
// its own, so every byte read goes to exactly one reader and no waiter is
// forgotten. A Write future writes a prefix of its buffer; concurrent ones
// may interleave where one is short. Writers that must send whole buffers
// take turns with the stream's WriteLock: co.Conn's Write does, so, as
// with Go's net.Conn, each Write call's bytes arrive contiguously. The
// stream's own poll-style methods (PollRead, PollWrite) are for one
// caller at a time; code that shares the stream uses a wio.Op of its own.
//
// # Deadlines
//
// There are no per-socket deadlines: any operation gets one by wrapping its
// future in io.Timeout (package weft/lib/wio), which uses the runtime's
// timer and drops the operation when the deadline passes. The error then
// matches os.ErrDeadlineExceeded. [Dialer.Timeout] does the same for a
// connect.
//
// # Errors
//
// Errors are *net.OpError values of the standard library, wrapping Go's
// own values, so errors.Is works as with Go's net: io.EOF (returned bare,
// as Go does), net.ErrClosed (operations on, or pending at, a closed
// socket), and syscall.Errno values such as ECONNRESET, ECONNREFUSED,
// EPIPE and EADDRINUSE.
//
// # Defaults
//
// TCP listeners set SO_REUSEADDR, and TCP streams disable Nagle's
// algorithm (TCP_NODELAY), as Go's net does; [ListenConfig] and
// SetNoDelay change them.
package wnet
