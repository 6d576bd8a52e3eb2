package wnet

import (
	"errors"
	"fmt"
	gonet "net"
	"net/netip"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// ErrNoDriver is the error of creating a socket in a runtime without an I/O
// driver (driver.kind "none"), or outside a runtime.
var ErrNoDriver = errors.New(`weft/net: the runtime has no I/O driver (driver.kind is "none"); compose it with one, e.g. driver.kind: epoll`)

// ErrUnsupported is wrapped by the error of an operation the runtime's
// driver does not offer (a driver without datagram sockets, for one).
var ErrUnsupported = errors.New("weft/net: not supported by the runtime's driver")

// driverOf returns the driver of the worker polling cx.
func driverOf(cx *core.Context) (core.Driver, error) {
	if cx == nil || cx.Worker() == nil {
		return nil, fmt.Errorf("%w: not polled by a runtime worker", ErrNoDriver)
	}
	d := cx.Worker().Driver()
	if d == nil {
		return nil, ErrNoDriver
	}
	return d, nil
}

// datagramIO returns d's datagram capability.
func datagramIO(d core.Driver) (core.DatagramIO, error) {
	if dg, ok := d.(core.DatagramIO); ok {
		return dg, nil
	}
	return nil, fmt.Errorf("%w: driver %T has no datagram sockets", ErrUnsupported, d)
}

// OnRuntime runs f on a worker of r, inside a poll, and returns what it
// returns: the way to create listeners and sockets from outside a task,
// for instance in main before the server starts. It blocks the calling
// goroutine until f has run (driving r meanwhile, for a current-thread
// runtime), so it must not be called from inside a task.
//
//	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
//		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
//	})
func OnRuntime[T any](r *rt.Runtime, f func(cx *core.Context) (T, error)) (T, error) {
	res, err := rt.BlockOn(r, core.PollFunc[core.Result[T]](func(cx *core.Context) (core.Result[T], bool) {
		v, err := f(cx)
		return core.Result[T]{Value: v, Err: err}, true
	}))
	if err != nil {
		var zero T
		return zero, err
	}
	return res.Value, res.Err
}

// netAddr converts a driver's address to the net package's type for its
// network: *net.TCPAddr, *net.UDPAddr or *net.UnixAddr. An address it
// cannot parse is returned as the core.Addr, which is a net.Addr too.
func netAddr(a core.Addr) gonet.Addr {
	switch a.Net {
	case "tcp", "tcp4", "tcp6":
		if ap, err := netip.ParseAddrPort(a.Addr); err == nil {
			return gonet.TCPAddrFromAddrPort(ap)
		}
	case "udp", "udp4", "udp6":
		if ap, err := netip.ParseAddrPort(a.Addr); err == nil {
			return gonet.UDPAddrFromAddrPort(ap)
		}
	case "unix", "unixgram", "unixpacket":
		return &gonet.UnixAddr{Name: a.Addr, Net: a.Net}
	}
	if a.Net == "" && a.Addr == "" {
		return nil
	}
	return a
}
