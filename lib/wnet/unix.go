package wnet

import (
	gonet "net"

	"github.com/weftrt/weft/core"
)

// ListenUnix binds a Unix stream listener on path ("@name" is Linux's
// abstract namespace). The socket file is removed when the listener is
// closed. It must be called inside a task.
func ListenUnix(cx *core.Context, path string) (*UnixListener, error) {
	return ListenConfig{}.ListenUnix(cx, path)
}

// ListenUnix binds a Unix stream listener with lc's options.
func (lc ListenConfig) ListenUnix(cx *core.Context, path string) (*UnixListener, error) {
	d, err := driverOf(cx)
	if err != nil {
		return nil, &gonet.OpError{Op: "listen", Net: "unix", Err: err}
	}
	h, local, err := d.Listen("unix", path, lc.options())
	if err != nil {
		return nil, &gonet.OpError{Op: "listen", Net: "unix", Addr: &gonet.UnixAddr{Name: path, Net: "unix"}, Err: err}
	}
	s := newSocket(d, h, "unix")
	s.laddr = netAddr(local)
	return &UnixListener{s: s}, nil
}

// UnixListener accepts Unix stream connections.
type UnixListener struct{ s *socket }

// Accept returns a future of the next connection; see TCPListener.Accept.
func (l *UnixListener) Accept() core.Future[core.Result[*UnixStream]] {
	return &acceptFuture[*UnixStream]{l: l.s, inner: l.s.d.Accept(l.s.h), make: newUnixStream}
}

// Addr returns the address the listener is bound to.
func (l *UnixListener) Addr() gonet.Addr { return l.s.local() }

// Close stops listening and removes the socket file. Pending Accepts
// resolve with net.ErrClosed.
func (l *UnixListener) Close() error { return l.s.close() }

// UnixStream is a Unix stream connection. It has the methods of TCPStream
// that are not about TCP.
type UnixStream struct{ stream }

func newUnixStream(s *socket) *UnixStream { return &UnixStream{newStream(s)} }

// DialUnix returns a future of a connection to the Unix socket at path.
// Dropping it before it resolves closes the socket.
func DialUnix(path string) core.Future[core.Result[*UnixStream]] {
	return Dialer{}.DialUnix(path)
}

// DialUnix connects with the dialer's options.
func (dl Dialer) DialUnix(path string) core.Future[core.Result[*UnixStream]] {
	return dial(dl, "unix", "unix", path, newUnixStream)
}

// BindUnixgram creates a Unix datagram socket bound to path (unbound if
// path is empty: it can send, and receive only from a peer it connected
// to). It must be called inside a task.
func BindUnixgram(cx *core.Context, path string) (*UnixDatagram, error) {
	p, err := bindPacket(cx, ListenConfig{}, "unixgram", path)
	if err != nil {
		return nil, err
	}
	return &UnixDatagram{packetSocket{p}}, nil
}

// UnixDatagram is a Unix datagram socket: messages keep their boundaries.
type UnixDatagram struct{ packetSocket }
