package wnet

import (
	gonet "net"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
)

// ListenConfig holds the options for creating listeners and datagram
// sockets. The zero value sets no option; ListenTCP uses DefaultListen.
type ListenConfig struct {
	// ReuseAddr sets SO_REUSEADDR: rebind a port whose old connections
	// are still in TIME_WAIT.
	ReuseAddr bool
	// ReusePort sets SO_REUSEPORT: several sockets bound to one port, the
	// kernel spreading connections (or datagrams) among them.
	ReusePort bool
	// Backlog is the listen queue's length; 0 means the system's maximum.
	Backlog int
}

// DefaultListen is what ListenTCP, ListenUnix, BindUDP and BindUnixgram
// use: SO_REUSEADDR on, as in Go's net.
var DefaultListen = ListenConfig{ReuseAddr: true}

func (lc ListenConfig) options() core.SocketOptions {
	return core.SocketOptions{ReuseAddr: lc.ReuseAddr, ReusePort: lc.ReusePort, Backlog: lc.Backlog}
}

// ListenTCP binds a TCP listener on address ("host:port"; port 0 picks a
// free port) with DefaultListen's options. network is "tcp", "tcp4" or
// "tcp6". It must be called inside a task (see the package documentation
// and OnRuntime).
func ListenTCP(cx *core.Context, network, address string) (*TCPListener, error) {
	return DefaultListen.ListenTCP(cx, network, address)
}

// ListenTCP binds a TCP listener with lc's options.
func (lc ListenConfig) ListenTCP(cx *core.Context, network, address string) (*TCPListener, error) {
	d, err := driverOf(cx)
	if err != nil {
		return nil, &gonet.OpError{Op: "listen", Net: network, Err: err}
	}
	h, local, err := d.Listen(network, address, lc.options())
	if err != nil {
		return nil, &gonet.OpError{Op: "listen", Net: network, Addr: addrOf(network, address), Err: err}
	}
	s := newSocket(d, h, "tcp")
	s.laddr = netAddr(local)
	return &TCPListener{s: s}, nil
}

// addrOf is a best-effort address for an error message.
func addrOf(network, address string) gonet.Addr {
	return core.Addr{Net: network, Addr: address}
}

// TCPListener accepts TCP connections.
type TCPListener struct{ s *socket }

// Accept returns a future of the next connection. Several Accepts may be
// pending at once; each gets its own connection. Closing the listener
// resolves pending Accepts with an error matching net.ErrClosed.
func (l *TCPListener) Accept() core.Future[core.Result[*TCPStream]] {
	return &acceptFuture[*TCPStream]{l: l.s, inner: l.s.d.Accept(l.s.h), make: newTCPStream}
}

// Addr returns the address the listener is bound to.
func (l *TCPListener) Addr() gonet.Addr { return l.s.local() }

// Close stops listening. Pending Accepts resolve with net.ErrClosed.
func (l *TCPListener) Close() error { return l.s.close() }

// IsClosed reports whether Close has been called on the listener. An
// Accept that fails with an error matching net.ErrClosed while IsClosed
// is false means the handle was lost under the listener (its driver
// closed, or an out-of-process driver's process exited and was
// restarted): a server that should keep serving listens again.
func (l *TCPListener) IsClosed() bool { return l.s.closed.Load() }

// Handle returns the driver's handle of the listener.
func (l *TCPListener) Handle() core.Handle { return l.s.h }

// acceptFuture wraps a driver Accept into a stream of type T.
type acceptFuture[T any] struct {
	l     *socket
	inner core.Future[core.Result[core.Accepted]]
	make  func(s *socket) T
}

func (f *acceptFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	r, ok := f.inner.Poll(cx)
	if !ok {
		return core.Result[T]{}, false
	}
	if r.Err != nil {
		return core.Result[T]{Err: f.l.opError("accept", r.Err)}, true
	}
	s := newSocket(f.l.d, r.Value.Handle, f.l.net)
	s.raddr = netAddr(r.Value.Peer)
	return core.Result[T]{Value: f.make(s)}, true
}

func (f *acceptFuture[T]) Drop() { core.Drop(f.inner) }

// TCPStream is a TCP connection. Its Read and Write (and the rest of the
// methods it shares with UnixStream) are described on those methods; any
// number of operations may be pending on it at once.
type TCPStream struct{ stream }

// newTCPStream wraps an accepted or connected socket, with Nagle's
// algorithm off as in Go's net. A failure to set the option is ignored, as
// Go does.
func newTCPStream(s *socket) *TCPStream {
	_ = s.d.SetOption(s.h, core.OptNoDelay, 1)
	return &TCPStream{newStream(s)}
}

// SetNoDelay turns Nagle's algorithm off (true, the default) or on.
func (s *TCPStream) SetNoDelay(noDelay bool) error {
	return s.setOption("set", core.OptNoDelay, boolInt(noDelay))
}

// SetKeepAlive turns TCP keep-alive probes on or off.
func (s *TCPStream) SetKeepAlive(on bool) error {
	return s.setOption("set", core.OptKeepAlive, boolInt(on))
}

// SetKeepAlivePeriod sets the idle time before the first keep-alive probe
// and the interval between probes (whole seconds on most systems, rounded
// up).
func (s *TCPStream) SetKeepAlivePeriod(d time.Duration) error {
	return s.setOption("set", core.OptKeepAlivePeriodMillis, int(d.Milliseconds()))
}

// SetLinger sets what Close does with unsent data, as net.TCPConn's: a
// negative sec sends it in the background (the default); zero discards it
// and resets the connection (the peer's reads fail with ECONNRESET);
// positive waits up to sec seconds.
func (s *TCPStream) SetLinger(sec int) error {
	return s.setOption("set", core.OptLingerSeconds, sec)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Dialer holds the options for connecting. The zero value connects with no
// timeout.
type Dialer struct {
	// Timeout bounds the connect, through the runtime's timer (which the
	// runtime must then have). Zero means no timeout beyond the system's.
	Timeout time.Duration
}

// DialTCP returns a future of a TCP connection to address ("host:port";
// "localhost" and IP literals resolve without a lookup). network is "tcp",
// "tcp4" or "tcp6". Dropping it before it resolves closes the socket.
func DialTCP(network, address string) core.Future[core.Result[*TCPStream]] {
	return Dialer{}.DialTCP(network, address)
}

// DialTCPTimeout is DialTCP with a timeout; see Dialer.
func DialTCPTimeout(network, address string, timeout time.Duration) core.Future[core.Result[*TCPStream]] {
	return Dialer{Timeout: timeout}.DialTCP(network, address)
}

// DialTCP connects with the dialer's options.
func (dl Dialer) DialTCP(network, address string) core.Future[core.Result[*TCPStream]] {
	return dial(dl, network, "tcp", address, newTCPStream)
}

func dial[T any](dl Dialer, network, norm, address string, mk func(*socket) T) core.Future[core.Result[T]] {
	var f core.Future[core.Result[T]] = &dialFuture[T]{network: network, norm: norm, address: address, make: mk}
	if dl.Timeout > 0 {
		f = &dialTimeout[T]{inner: wio.Timeout(f, dl.Timeout), network: network, address: address}
	}
	return f
}

// dialFuture connects through the driver of the worker that first polls
// it.
type dialFuture[T any] struct {
	network, norm, address string
	make                   func(*socket) T
	d                      core.Driver
	inner                  core.Future[core.Result[core.Handle]]
}

func (f *dialFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	if f.inner == nil {
		d, err := driverOf(cx)
		if err != nil {
			return core.Result[T]{Err: f.error(err)}, true
		}
		f.d = d
		f.inner = d.Connect(f.network, f.address, core.SocketOptions{})
	}
	r, ok := f.inner.Poll(cx)
	if !ok {
		return core.Result[T]{}, false
	}
	f.inner = nil
	if r.Err != nil {
		return core.Result[T]{Err: f.error(r.Err)}, true
	}
	return core.Result[T]{Value: f.make(newSocket(f.d, r.Value, f.norm))}, true
}

func (f *dialFuture[T]) error(err error) error {
	return &gonet.OpError{Op: "dial", Net: f.network, Addr: addrOf(f.network, f.address), Err: err}
}

func (f *dialFuture[T]) Drop() {
	if f.inner != nil {
		core.Drop(f.inner)
		f.inner = nil
	}
}

// dialTimeout wraps the deadline error of a timed-out dial in an OpError,
// as Go's net does ("dial tcp ...: i/o timeout").
type dialTimeout[T any] struct {
	inner            core.Future[core.Result[T]]
	network, address string
}

func (f *dialTimeout[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	r, ok := f.inner.Poll(cx)
	if ok && r.Err != nil {
		if _, isOp := r.Err.(*gonet.OpError); !isOp {
			r.Err = &gonet.OpError{Op: "dial", Net: f.network, Addr: addrOf(f.network, f.address), Err: r.Err}
		}
	}
	return r, ok
}

func (f *dialTimeout[T]) Drop() { core.Drop(f.inner) }
