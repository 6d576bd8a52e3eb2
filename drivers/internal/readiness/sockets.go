//go:build darwin || freebsd || netbsd || openbsd || linux

package readiness

import (
	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// Listen is core.Driver.Listen: it binds a listening stream socket, "tcp",
// "tcp4", "tcp6" on host:port, or "unix"/"unixpacket" on a path ("@name"
// is Linux's abstract namespace). The socket file of a Unix listener is
// removed when its handle is closed.
func (o *Ops) Listen(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	if o.r.Closed() {
		return 0, core.Addr{}, ErrDriverClosed
	}
	b, err := sockets.Listen(network, address, opts, o.backlog)
	if err != nil {
		return 0, core.Addr{}, err
	}
	h, io, err := o.r.Register(b.FD, Listener, b.Net, 0)
	if err != nil {
		unix.Close(b.FD) // never registered: not the driver's CloseFD
		return 0, core.Addr{}, err
	}
	io.UnlinkPath = b.UnlinkPath
	return h, b.Local, nil
}

// Bind is core.DatagramIO.Bind: it creates a datagram socket ("udp*",
// "unixgram") bound to address. A "unixgram" socket with an empty address
// is left unbound (it can send, and receive replies only once connected to
// a bound peer that knows it).
func (o *Ops) Bind(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	if o.r.Closed() {
		return 0, core.Addr{}, ErrDriverClosed
	}
	b, err := sockets.Bind(network, address, opts)
	if err != nil {
		return 0, core.Addr{}, err
	}
	h, _, err := o.r.Register(b.FD, Datagram, b.Net, 0)
	if err != nil {
		unix.Close(b.FD) // never registered: not the driver's CloseFD
		return 0, core.Addr{}, err
	}
	return h, b.Local, nil
}

// ConnectDatagram is core.DatagramIO.ConnectDatagram: it fixes the peer of
// a datagram socket, so Write sends to it and Read receives from it only.
func (o *Ops) ConnectDatagram(h core.Handle, address string) error {
	return WithFD(o.r, h, func(io *IO) error {
		return sockets.ConnectDatagram(io.FD.n, io.Network, address)
	})
}

// JoinGroup is core.DatagramIO.JoinGroup: it joins the multicast group on
// the named interface ("" lets the kernel choose by route).
func (o *Ops) JoinGroup(h core.Handle, group, iface string) error {
	g, err := sockets.ParseGroup(group, iface)
	if err != nil {
		return err
	}
	return WithFD(o.r, h, func(io *IO) error { return g.Join(io.FD.n) })
}

// Shutdown is core.Driver.Shutdown: it shuts down one or both directions
// of a stream (shutdown(2)).
func (o *Ops) Shutdown(h core.Handle, how core.ShutdownHow) error {
	mode, err := sockets.ShutdownMode(o.name, how)
	if err != nil {
		return err
	}
	return WithFD(o.r, h, func(io *IO) error { return sockets.Shutdown(io.FD.n, mode) })
}

// SetOption is core.Driver.SetOption: it sets a socket option. Keep-alive
// periods are rounded up to whole seconds and set as both the idle time
// and the probe interval.
func (o *Ops) SetOption(h core.Handle, opt core.SocketOption, value int) error {
	return WithFD(o.r, h, func(io *IO) error { return sockets.SetOption(o.name, io.FD.n, opt, value) })
}

// LocalAddr is core.Driver.LocalAddr: the address the socket is bound to.
func (o *Ops) LocalAddr(h core.Handle) (core.Addr, error) {
	var a core.Addr
	err := WithFD(o.r, h, func(io *IO) (err error) {
		a, err = sockets.LocalAddr(io.FD.n, io.Network)
		return err
	})
	return a, err
}

// PeerAddr is core.Driver.PeerAddr: the address of the connected peer.
func (o *Ops) PeerAddr(h core.Handle) (core.Addr, error) {
	var a core.Addr
	err := WithFD(o.r, h, func(io *IO) (err error) {
		a, err = sockets.PeerAddr(io.FD.n, io.Network)
		return err
	})
	return a, err
}
