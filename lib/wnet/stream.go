package wnet

import (
	"io"
	gonet "net"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wsync"
)

// socket is what every socket type holds: its driver, its handle, and the
// addresses, fetched from the driver on first use and kept.
type socket struct {
	d      core.Driver
	h      core.Handle
	net    string // "tcp", "udp", "unix", "unixgram"
	closed atomic.Bool

	mu           sync.Mutex
	laddr, raddr gonet.Addr

	// rd and wr are the stream's own poll-style operations, behind
	// PollRead and PollWrite, for the one caller each allows; wlock is
	// the turn of whole-buffer writers (wio.WriteLocker). Only streams
	// use them.
	rd, wr wio.Op
	wlock  wsync.Mutex
}

func newSocket(d core.Driver, h core.Handle, network string) *socket {
	return &socket{d: d, h: h, net: network}
}

// local returns the local address, nil if the driver cannot tell.
func (s *socket) local() gonet.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.laddr == nil && !s.closed.Load() {
		if a, err := s.d.LocalAddr(s.h); err == nil {
			s.laddr = netAddr(a)
		}
	}
	return s.laddr
}

// remote returns the peer's address, nil if there is none.
func (s *socket) remote() gonet.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.raddr == nil && !s.closed.Load() {
		if a, err := s.d.PeerAddr(s.h); err == nil {
			s.raddr = netAddr(a)
		}
	}
	return s.raddr
}

func (s *socket) setRemote(a gonet.Addr) {
	s.mu.Lock()
	s.raddr = a
	s.mu.Unlock()
}

// opError wraps a driver error as Go's net does; io.EOF stays bare.
func (s *socket) opError(op string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return &gonet.OpError{Op: op, Net: s.net, Source: s.local(), Addr: s.remote(), Err: err}
}

// close closes the handle once; later calls fail with net.ErrClosed.
func (s *socket) close() error {
	if s.closed.Load() {
		return s.opError("close", gonet.ErrClosed)
	}
	// Learn the addresses while the handle is valid, for the errors of
	// operations that fail because of the close.
	s.local()
	s.remote()
	if s.closed.Swap(true) {
		return s.opError("close", gonet.ErrClosed)
	}
	return s.opError("close", s.d.CloseHandle(s.h))
}

func (s *socket) setOption(op string, opt core.SocketOption, v int) error {
	return s.opError(op, s.d.SetOption(s.h, opt, v))
}

// opFuture wraps a driver operation's future to wrap its error.
type opFuture[T any] struct {
	inner core.Future[core.Result[T]]
	s     *socket
	op    string
}

func wrap[T any](s *socket, op string, f core.Future[core.Result[T]]) core.Future[core.Result[T]] {
	return &opFuture[T]{inner: f, s: s, op: op}
}

func (f *opFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	r, ok := f.inner.Poll(cx)
	if ok && r.Err != nil {
		r.Err = f.s.opError(f.op, r.Err)
	}
	return r, ok
}

func (f *opFuture[T]) Drop() { core.Drop(f.inner) }

// Cancel implements wio.Canceller for a driver operation that does (a
// write on a completion driver), so a caller's wio.Op on a stream can
// stop it at a deadline without losing count of what it wrote.
func (f *opFuture[T]) Cancel() bool { return wio.Cancel(f.inner) }

// Rearm re-arms the driver's future (see wio.Rearmer), so a caller's
// wio.Op on a stream reuses one future, and the driver's operation in it,
// for every transfer. A driver whose futures cannot be re-armed costs an
// allocation per transfer instead.
func (f *opFuture[T]) Rearm(p []byte) bool {
	r, ok := f.inner.(wio.Rearmer)
	return ok && r.Rearm(p)
}

// stream is the part of TCPStream and UnixStream they share.
type stream struct{ *socket }

// newStream makes a stream of a connected socket.
func newStream(s *socket) stream {
	st := stream{s}
	s.rd, s.wr = wio.ReadOp(st), wio.WriteOp(st)
	return st
}

// Read returns a future that reads up to len(p) bytes: (n > 0, nil), or
// (0, io.EOF) once the peer has shut down its write side and every byte
// was read. See weft/lib/wio.Reader. Reads pending at once, from any
// number of tasks, each get bytes of their own: every byte goes to
// exactly one of them.
func (s stream) Read(p []byte) core.Future[core.Result[int]] {
	return wrap(s.socket, "read", s.d.Read(s.h, p))
}

// Write returns a future that writes a prefix of p: it resolves once at
// least one byte is written, and may write fewer than len(p) (use
// io.WriteAll to write everything). See weft/lib/wio.Writer. Writes
// pending at once each write their own prefix; where one is short,
// another's bytes may follow it before the rest of its buffer (see
// WriteLock for writers that must not interleave).
func (s stream) Write(p []byte) core.Future[core.Result[int]] {
	return wrap(s.socket, "write", s.d.Write(s.h, p))
}

// PollRead reads into p by polling, without a future per read: the
// weft/lib/wio.PollReader interface. Its operation is the stream's own, so
// one caller at a time may use it; until it reports done, call it again
// with the same p. Read futures are independent of it, and so is a
// wio.ReadOp on the stream, which is what code that shares the stream
// uses (wio.Copy and package weft/lib/co do): each such caller has an
// operation of its own.
func (s stream) PollRead(cx *core.Context, p []byte) (int, error, bool) {
	return s.rd.Poll(cx, p)
}

// CancelRead abandons a PollRead that reported pending.
func (s stream) CancelRead() { s.rd.Cancel() }

// PollWrite writes a prefix of p by polling: the weft/lib/wio.PollWriter
// interface. Like PollRead it is for one caller at a time; until it
// reports done, call it again with the same p.
func (s stream) PollWrite(cx *core.Context, p []byte) (int, error, bool) {
	return s.wr.Poll(cx, p)
}

// CancelWrite abandons a PollWrite that reported pending.
func (s stream) CancelWrite() { s.wr.Cancel() }

// WriteLock returns the stream's write lock, which writers that send
// whole buffers take turns with (weft/lib/wio.WriteLocker): package
// weft/lib/co's Conn and Writer hold it through each Write, so that each
// Write's bytes go out contiguously, as with Go's net.Conn. Write futures
// do not take it.
func (s stream) WriteLock() *wsync.Mutex { return &s.wlock }

// ReadVectored reads into bufs in order with one operation when the driver
// supports vectored I/O, and into the first non-empty buffer otherwise.
func (s stream) ReadVectored(bufs [][]byte) core.Future[core.Result[int]] {
	if v, ok := s.d.(core.VectoredIO); ok {
		return wrap(s.socket, "read", v.Readv(s.h, bufs))
	}
	for _, b := range bufs {
		if len(b) > 0 {
			return s.Read(b)
		}
	}
	return s.Read(nil)
}

// WriteVectored writes bufs in order with one operation when the driver
// supports vectored I/O (writev), and the first non-empty buffer
// otherwise. Like Write it may be short.
func (s stream) WriteVectored(bufs [][]byte) core.Future[core.Result[int]] {
	if v, ok := s.d.(core.VectoredIO); ok {
		return wrap(s.socket, "write", v.Writev(s.h, bufs))
	}
	for _, b := range bufs {
		if len(b) > 0 {
			return s.Write(b)
		}
	}
	return s.Write(nil)
}

// CloseRead shuts down the read side: later reads return io.EOF.
func (s stream) CloseRead() error {
	return s.opError("close", s.d.Shutdown(s.h, core.ShutdownRead))
}

// CloseWrite shuts down the write side (a half close): the peer reads
// io.EOF after what was written, and this end can still read.
func (s stream) CloseWrite() error {
	return s.opError("close", s.d.Shutdown(s.h, core.ShutdownWrite))
}

// Close closes the stream. Operations pending on it resolve with an error
// matching net.ErrClosed, as do later operations and a second Close.
func (s stream) Close() error { return s.close() }

// LocalAddr returns the stream's local address.
func (s stream) LocalAddr() gonet.Addr { return s.local() }

// RemoteAddr returns the peer's address.
func (s stream) RemoteAddr() gonet.Addr { return s.remote() }

// SetReadBuffer sets the size of the socket's receive buffer
// (SO_RCVBUF).
func (s stream) SetReadBuffer(bytes int) error {
	return s.setOption("set", core.OptRecvBuffer, bytes)
}

// SetWriteBuffer sets the size of the socket's send buffer (SO_SNDBUF).
func (s stream) SetWriteBuffer(bytes int) error {
	return s.setOption("set", core.OptSendBuffer, bytes)
}

// Handle returns the driver's handle of the stream, for code that talks
// to the driver directly.
func (s stream) Handle() core.Handle { return s.h }
