//go:build linux

package iouring

import (
	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// The socket plumbing (creation, addresses, options) is package
// drivers/internal/sockets, shared with drivers/epoll and drivers/kqueue;
// these methods register its sockets under handles.

// Listen binds a listening stream socket: "tcp", "tcp4", "tcp6" on
// host:port, or "unix"/"unixpacket" on a path ("@name" is Linux's abstract
// namespace). The socket file of a Unix listener is removed when its handle
// is closed.
func (d *Driver) Listen(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	if d.closed.Load() {
		return 0, core.Addr{}, errDriverClosed
	}
	b, err := sockets.Listen(network, address, opts, d.backlog)
	if err != nil {
		return 0, core.Addr{}, err
	}
	h, rec, err := d.register(b.FD, kindListener, b.Net)
	if err != nil {
		unix.Close(b.FD)
		return 0, core.Addr{}, err
	}
	rec.unlinkPath = b.UnlinkPath
	return h, b.Local, nil
}

// Bind creates a datagram socket ("udp*", "unixgram") bound to address. A
// "unixgram" socket with an empty address is left unbound (it can send,
// and receive replies only once connected to a bound peer that knows it).
func (d *Driver) Bind(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	if d.closed.Load() {
		return 0, core.Addr{}, errDriverClosed
	}
	b, err := sockets.Bind(network, address, opts)
	if err != nil {
		return 0, core.Addr{}, err
	}
	h, _, err := d.register(b.FD, kindDatagram, b.Net)
	if err != nil {
		unix.Close(b.FD)
		return 0, core.Addr{}, err
	}
	return h, b.Local, nil
}

// ConnectDatagram fixes the peer of a datagram socket: Write sends to it,
// Read receives from it only.
func (d *Driver) ConnectDatagram(h core.Handle, address string) error {
	return d.withFD(h, func(rec *fileRec) error {
		return sockets.ConnectDatagram(rec.fd, rec.network, address)
	})
}

// JoinGroup joins the multicast group on the named interface ("" lets the
// kernel choose by route).
func (d *Driver) JoinGroup(h core.Handle, group, iface string) error {
	g, err := sockets.ParseGroup(group, iface)
	if err != nil {
		return err
	}
	return d.withFD(h, func(rec *fileRec) error { return g.Join(rec.fd) })
}

// Shutdown shuts down one or both directions of a stream (shutdown(2)).
func (d *Driver) Shutdown(h core.Handle, how core.ShutdownHow) error {
	mode, err := sockets.ShutdownMode("iouring", how)
	if err != nil {
		return err
	}
	return d.withFD(h, func(rec *fileRec) error { return sockets.Shutdown(rec.fd, mode) })
}

// SetOption sets a socket option. Keep-alive periods are rounded up to
// whole seconds and set as both the idle time and the probe interval.
func (d *Driver) SetOption(h core.Handle, opt core.SocketOption, value int) error {
	return d.withFD(h, func(rec *fileRec) error { return sockets.SetOption("iouring", rec.fd, opt, value) })
}

// LocalAddr returns the address the socket is bound to.
func (d *Driver) LocalAddr(h core.Handle) (core.Addr, error) {
	return d.addr(h, sockets.LocalAddr)
}

// PeerAddr returns the address of the connected peer.
func (d *Driver) PeerAddr(h core.Handle) (core.Addr, error) {
	return d.addr(h, sockets.PeerAddr)
}

func (d *Driver) addr(h core.Handle, get func(fd int, network string) (core.Addr, error)) (core.Addr, error) {
	var a core.Addr
	err := d.withFD(h, func(rec *fileRec) (err error) {
		a, err = get(rec.fd, rec.network)
		return err
	})
	return a, err
}
