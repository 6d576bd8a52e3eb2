package wnet

import (
	gonet "net"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
)

// BindUDP creates a UDP socket bound to address ("host:port"; port 0 picks
// a free port) with DefaultListen's options. network is "udp", "udp4" or
// "udp6". It must be called inside a task.
func BindUDP(cx *core.Context, network, address string) (*UDPSocket, error) {
	return DefaultListen.BindUDP(cx, network, address)
}

// BindUDP creates a UDP socket with lc's options (ReusePort lets several
// sockets share a port).
func (lc ListenConfig) BindUDP(cx *core.Context, network, address string) (*UDPSocket, error) {
	p, err := bindPacket(cx, lc, network, address)
	if err != nil {
		return nil, err
	}
	return &UDPSocket{packetSocket{p}}, nil
}

// UDPSocket is a UDP socket. Each SendTo or Send is one datagram, and each
// RecvFrom or Recv receives exactly one.
type UDPSocket struct{ packetSocket }

// SetBroadcast allows or forbids sending to broadcast addresses.
func (u *UDPSocket) SetBroadcast(on bool) error {
	return u.setOption("set", core.OptBroadcast, boolInt(on))
}

// JoinGroup joins the multicast group (an IP address) on the named
// interface ("" lets the system choose).
func (u *UDPSocket) JoinGroup(group, iface string) error {
	dg, err := datagramIO(u.d)
	if err == nil {
		err = dg.JoinGroup(u.h, group, iface)
	}
	return u.opError("join", err)
}

func bindPacket(cx *core.Context, lc ListenConfig, network, address string) (*socket, error) {
	d, err := driverOf(cx)
	if err != nil {
		return nil, &gonet.OpError{Op: "listen", Net: network, Err: err}
	}
	dg, err := datagramIO(d)
	if err != nil {
		return nil, &gonet.OpError{Op: "listen", Net: network, Err: err}
	}
	h, local, err := dg.Bind(network, address, lc.options())
	if err != nil {
		return nil, &gonet.OpError{Op: "listen", Net: network, Addr: addrOf(network, address), Err: err}
	}
	norm := "udp"
	if network == "unixgram" {
		norm = "unixgram"
	}
	s := newSocket(d, h, norm)
	s.laddr = netAddr(local)
	return s, nil
}

// Datagram is one message received by RecvFrom: its length and sender.
type Datagram struct {
	N    int
	From gonet.Addr
}

// packetSocket is the part of UDPSocket and UnixDatagram they share.
type packetSocket struct{ *socket }

// SendTo returns a future that sends p as one datagram to address. It
// resolves to len(p); a datagram too large for the network fails (EMSGSIZE)
// rather than being split.
func (p packetSocket) SendTo(b []byte, address string) core.Future[core.Result[int]] {
	dg, err := datagramIO(p.d)
	if err != nil {
		return wio.Ready(0, p.opError("write", err))
	}
	return wrap(p.socket, "write", dg.SendTo(p.h, b, address))
}

// RecvFrom returns a future that receives one datagram into b, with its
// sender. A datagram longer than b is truncated to len(b) and the rest is
// discarded.
func (p packetSocket) RecvFrom(b []byte) core.Future[core.Result[Datagram]] {
	dg, err := datagramIO(p.d)
	if err != nil {
		return wio.Ready(Datagram{}, p.opError("read", err))
	}
	return &recvFuture{inner: wrap(p.socket, "read", dg.RecvFrom(p.h, b))}
}

type recvFuture struct {
	inner core.Future[core.Result[core.Datagram]]
}

func (f *recvFuture) Poll(cx *core.Context) (core.Result[Datagram], bool) {
	r, ok := f.inner.Poll(cx)
	if !ok {
		return core.Result[Datagram]{}, false
	}
	return core.Result[Datagram]{Value: Datagram{N: r.Value.N, From: netAddr(r.Value.From)}, Err: r.Err}, true
}

func (f *recvFuture) Drop() { core.Drop(f.inner) }

// Connect fixes the socket's peer: Send goes to it, and Recv and RecvFrom
// receive only from it.
func (p packetSocket) Connect(address string) error {
	dg, err := datagramIO(p.d)
	if err == nil {
		err = dg.ConnectDatagram(p.h, address)
	}
	if err == nil {
		p.setRemote(nil) // learnt again from the driver
	}
	return p.opError("dial", err)
}

// Send returns a future that sends b as one datagram to the connected
// peer.
func (p packetSocket) Send(b []byte) core.Future[core.Result[int]] {
	return wrap(p.socket, "write", p.d.Write(p.h, b))
}

// Recv returns a future that receives one datagram from the connected
// peer into b (truncated to len(b)). An empty datagram resolves to 0 with
// no error.
func (p packetSocket) Recv(b []byte) core.Future[core.Result[int]] {
	return wrap(p.socket, "read", p.d.Read(p.h, b))
}

// LocalAddr returns the socket's local address.
func (p packetSocket) LocalAddr() gonet.Addr { return p.local() }

// RemoteAddr returns the connected peer's address, or nil.
func (p packetSocket) RemoteAddr() gonet.Addr { return p.remote() }

// SetReadBuffer sets the size of the socket's receive buffer (SO_RCVBUF).
func (p packetSocket) SetReadBuffer(bytes int) error {
	return p.setOption("set", core.OptRecvBuffer, bytes)
}

// SetWriteBuffer sets the size of the socket's send buffer (SO_SNDBUF).
func (p packetSocket) SetWriteBuffer(bytes int) error {
	return p.setOption("set", core.OptSendBuffer, bytes)
}

// Close closes the socket. Pending operations resolve with an error
// matching net.ErrClosed.
func (p packetSocket) Close() error { return p.close() }

// Handle returns the driver's handle of the socket.
func (p packetSocket) Handle() core.Handle { return p.h }
