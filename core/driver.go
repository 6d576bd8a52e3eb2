package core

import (
	"errors"
	"log/slog"
	"time"
)

// Handle is an opaque reference to an I/O resource owned by a [Driver]: a
// socket or a file. In process it is usually a file descriptor; a driver in
// another process or a simulator hands out identifiers of its own. Only the
// driver that issued a handle may interpret it.
type Handle uint64

// Addr is a network address as a driver reports it. It implements net.Addr
// and carries only strings, so it crosses a process boundary unchanged.
type Addr struct {
	Net  string // "tcp", "tcp4", "tcp6", "udp", "unix", "unixgram", ...
	Addr string // in the form the net package prints and parses
}

// Network returns the address's network name.
func (a Addr) Network() string { return a.Net }

// String returns the address in the net package's textual form.
func (a Addr) String() string { return a.Addr }

// ErrDriverClosed is the error of operations that were pending when their
// driver closed, or that were issued after it.
var ErrDriverClosed = errors.New("weft: driver closed")

// Driver performs I/O for a runtime. It is the SPI implemented by the
// modules under drivers/ and registered with [RegisterDriver].
//
// # Shape
//
// The interface is operation-level, not readiness-level: each I/O call
// returns a future of its result. A readiness driver (epoll, kqueue)
// implements a future by trying the system call and, on EAGAIN, registering
// the task's waker for readiness; a completion driver (io_uring) submits the
// operation and resolves the future from its completion. Apart from the
// wakers captured by those futures, nothing in the interface is a pointer
// into the runtime's memory, so a driver can live in another process (the
// plugins module) with handles as identifiers and buffers copied.
//
// Futures returned by a driver implement [Dropper]: dropping a pending
// operation cancels it, and loses nothing: a stream read dropped after
// the driver had taken bytes off the socket for it (a completion driver's
// request that completed before its cancel, a read a plugin process had
// done) leaves those bytes, and a failure that followed them, to the next
// read on the handle, which gets them before anything newer. A completion
// driver keeps an operation's buffer reachable until the kernel's
// completion arrives, and cleans up the result of other operations that
// completed after a failed cancel (closing an accepted handle). A write
// the kernel may have done in part by the time it is abandoned is a
// weft/lib/wio.Canceller, so that a deadline learns how many bytes it
// wrote; a plain Drop of it may have written a prefix.
//
// # Parking
//
// Park and Unpark belong to the worker that owns the driver. Closing a
// handle wakes every operation pending on it with an error wrapping
// net.ErrClosed. Errors match Go's values under errors.Is: io.EOF,
// net.ErrClosed, and the syscall.Errno values of the failure.
//
// # Optional capabilities
//
// Like database/sql/driver, the core interface stays small and optional
// capabilities are separate interfaces discovered with a type assertion:
// [VectoredIO], [DatagramIO], [FileIO], [QuiescentDriver].
type Driver interface {
	// Park waits at most timeout for I/O events and wakes the tasks whose
	// operations can progress. A negative timeout waits until an event or
	// Unpark; zero polls without blocking.
	Park(timeout time.Duration) error
	// Unpark makes the current or next Park return promptly. It may be
	// called from any goroutine.
	Unpark()
	// Close fails every pending operation with ErrDriverClosed and
	// releases the driver. Handles it issued become invalid.
	Close() error

	// Listen binds a listening stream socket ("tcp*", "unix").
	Listen(network, address string, opts SocketOptions) (Handle, Addr, error)
	// Accept resolves to the next connection of a listening handle.
	Accept(h Handle) Future[Result[Accepted]]
	// Connect resolves to a connected stream socket.
	Connect(network, address string, opts SocketOptions) Future[Result[Handle]]
	// Read resolves to the number of bytes read into p; 0 with io.EOF at
	// end of stream. The driver may write p until the future resolves or
	// its Drop has returned, except that a completion driver's dropped
	// read of a file or a datagram socket may write p until the kernel's
	// completion of the cancelled request arrives (it keeps p reachable
	// until then). A dropped stream read loses no byte (see above).
	Read(h Handle, p []byte) Future[Result[int]]
	// Write resolves to the number of bytes of p written; it may be fewer
	// than len(p).
	Write(h Handle, p []byte) Future[Result[int]]
	// Shutdown shuts down the read side, the write side, or both.
	Shutdown(h Handle, how ShutdownHow) error
	// SetOption sets a socket option.
	SetOption(h Handle, opt SocketOption, value int) error
	// LocalAddr and PeerAddr return the handle's addresses.
	LocalAddr(h Handle) (Addr, error)
	PeerAddr(h Handle) (Addr, error)
	// CloseHandle releases h. Operations pending on it fail with an error
	// wrapping net.ErrClosed.
	CloseHandle(h Handle) error
}

// Accepted is a connection returned by Accept.
type Accepted struct {
	Handle Handle
	Peer   Addr
}

// SocketOptions are applied when a socket is created.
type SocketOptions struct {
	ReuseAddr bool
	ReusePort bool
	// Backlog is the listen queue length; 0 means the system default.
	Backlog int
}

// ShutdownHow says which direction of a stream Shutdown closes.
type ShutdownHow uint8

// Directions for Shutdown.
const (
	ShutdownRead ShutdownHow = iota + 1
	ShutdownWrite
	ShutdownBoth
)

// SocketOption names an option for SetOption. Durations are in
// milliseconds; booleans are 0 or 1.
type SocketOption uint8

// Socket options a driver understands.
const (
	OptNoDelay SocketOption = iota + 1
	OptKeepAlive
	OptKeepAlivePeriodMillis
	OptLingerSeconds // negative disables lingering
	OptRecvBuffer
	OptSendBuffer
	OptBroadcast
)

// VectoredIO is an optional Driver capability: scatter/gather I/O.
type VectoredIO interface {
	Readv(h Handle, bufs [][]byte) Future[Result[int]]
	Writev(h Handle, bufs [][]byte) Future[Result[int]]
}

// Datagram is one message received by RecvFrom.
type Datagram struct {
	N    int
	From Addr
}

// DatagramIO is an optional Driver capability: datagram sockets.
type DatagramIO interface {
	// Bind creates a datagram socket ("udp*", "unixgram") bound to address.
	Bind(network, address string, opts SocketOptions) (Handle, Addr, error)
	// ConnectDatagram fixes the peer of a datagram socket.
	ConnectDatagram(h Handle, address string) error
	RecvFrom(h Handle, p []byte) Future[Result[Datagram]]
	SendTo(h Handle, p []byte, to string) Future[Result[int]]
	// JoinGroup joins a multicast group on the named interface ("" for
	// the default).
	JoinGroup(h Handle, group, iface string) error
}

// FileIO is an optional Driver capability: files through the driver. A
// driver without it (or a readiness driver, for which regular files are
// always ready) leaves file operations to the blocking pool.
type FileIO interface {
	OpenFile(path string, flag int, perm uint32) Future[Result[Handle]]
	ReadAt(h Handle, p []byte, off int64) Future[Result[int]]
	WriteAt(h Handle, p []byte, off int64) Future[Result[int]]
	Fsync(h Handle) Future[Result[Unit]]
	CloseFile(h Handle) Future[Result[Unit]]
}

// QuiescentDriver is an optional Driver capability: the driver can tell
// when a Park would have nothing to deliver, so that a scheduler may sleep
// somewhere cheaper than the driver (a Go channel, woken without a system
// call) and skip its polls.
//
// Quiescent reports that no descriptor is registered and no operation is
// in flight: while it holds, a Park could end only through Unpark or its
// timeout. It is a snapshot; a registration may follow at once.
//
// OnActive sets the function the driver calls each time it stops being
// quiescent, after Quiescent has begun to report false and before the
// registration or operation that ended the quiescence can need a Park. A
// scheduler that checks Quiescent after announcing (with a sequentially
// consistent atomic) that it sleeps off the driver, and whose fn looks for
// that announcement, misses no activation: either its check sees the
// activity or fn sees the sleeper. fn runs on the goroutine that
// registered or submitted, possibly under the driver's locks, so it must
// not block and must not call back into the driver. A later call replaces
// fn; nil removes it.
type QuiescentDriver interface {
	Driver
	Quiescent() bool
	OnActive(fn func())
}

// DriverParams is what the runtime hands a driver module when it is built.
type DriverParams struct {
	// Events is the size of the event buffer per Park (1024 by default).
	Events int
	// Log is the runtime's logger, for what a driver reports on its own
	// (a fallback to another driver, a plugin's output). Nil means
	// slog.Default().
	Log *slog.Logger
}
