package net

import (
	"io"
	gonet "net"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
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

	// rd and wr are the operations of PollRead and PollWrite, owned by
	// the one task polling each direction.
	rd, wr pollSlot
}

// pollSlot keeps one driver operation for poll-style I/O in one
// direction, so a loop of PollReads allocates nothing: a finished
// operation is re-armed for the next buffer when the driver's future
// supports it (see rearmer), and a new one is requested otherwise.
type pollSlot struct {
	op      core.Future[core.Result[int]]
	pending bool
}

// rearmer is implemented by a driver's Read and Write futures that can be
// reused: Rearm readies a resolved future for a new operation on p and
// reports whether it did. It is an optional, informal capability between a
// driver and this package; a driver without it costs an allocation per
// poll-style operation.
type rearmer interface {
	Rearm(p []byte) bool
}

// poll runs one poll-style operation; start makes a fresh one.
func (sl *pollSlot) poll(cx *core.Context, p []byte, start func([]byte) core.Future[core.Result[int]]) (int, error, bool) {
	if !sl.pending {
		if r, ok := sl.op.(rearmer); !ok || !r.Rearm(p) {
			sl.op = start(p)
		}
	}
	res, ok := sl.op.Poll(cx)
	sl.pending = !ok
	return res.Value, res.Err, ok
}

// cancel drops a pending operation.
func (sl *pollSlot) cancel() {
	if sl.pending {
		core.Drop(sl.op)
		sl.op = nil
		sl.pending = false
	}
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

// stream is the part of TCPStream and UnixStream they share.
type stream struct{ *socket }

// Read returns a future that reads up to len(p) bytes: (n > 0, nil), or
// (0, io.EOF) once the peer has shut down its write side and every byte
// was read. See weft/core/io.Reader.
func (s stream) Read(p []byte) core.Future[core.Result[int]] {
	return wrap(s.socket, "read", s.d.Read(s.h, p))
}

// Write returns a future that writes a prefix of p: it resolves once at
// least one byte is written, and may write fewer than len(p) (use
// io.WriteAll to write everything). See weft/core/io.Writer.
func (s stream) Write(p []byte) core.Future[core.Result[int]] {
	return wrap(s.socket, "write", s.d.Write(s.h, p))
}

// PollRead reads into p by polling, without a future per read: the
// weft/core/io.PollReader interface, which Copy uses. One task at a time
// may use PollRead on a stream; until it reports done, call it again with
// the same p. Read futures are independent of it.
func (s stream) PollRead(cx *core.Context, p []byte) (int, error, bool) {
	n, err, ok := s.rd.poll(cx, p, func(p []byte) core.Future[core.Result[int]] { return s.d.Read(s.h, p) })
	if ok && err != nil {
		err = s.opError("read", err)
	}
	return n, err, ok
}

// CancelRead abandons a PollRead that reported pending.
func (s stream) CancelRead() { s.rd.cancel() }

// PollWrite writes a prefix of p by polling: the weft/core/io.PollWriter
// interface. One task at a time may use it; until it reports done, call it
// again with the same p.
func (s stream) PollWrite(cx *core.Context, p []byte) (int, error, bool) {
	n, err, ok := s.wr.poll(cx, p, func(p []byte) core.Future[core.Result[int]] { return s.d.Write(s.h, p) })
	if ok && err != nil {
		err = s.opError("write", err)
	}
	return n, err, ok
}

// CancelWrite abandons a PollWrite that reported pending.
func (s stream) CancelWrite() { s.wr.cancel() }

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
