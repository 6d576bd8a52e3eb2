//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// socket creates a non-blocking, close-on-exec socket with opts applied.
func socket(network string, family, sotype int, opts core.SocketOptions) (int, error) {
	fd, err := sysSocket(family, sotype)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	if family == unix.AF_INET6 {
		// Dual stack, as Go's net does for "tcp" and "udp": an IPv6
		// socket also serves IPv4, unless the network is "tcp6"/"udp6".
		// (OpenBSD has no dual-stack sockets and refuses 0; resolve
		// picks IPv4 for its wildcard listeners instead.)
		v6only := 0
		if strings.HasSuffix(network, "6") {
			v6only = 1
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v6only)
	}
	set := func(opt int, on bool) error {
		if !on {
			return nil
		}
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, opt, 1)
	}
	if err := set(unix.SO_REUSEADDR, opts.ReuseAddr); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("setsockopt", err)
	}
	if err := set(unix.SO_REUSEPORT, opts.ReusePort); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("setsockopt", err)
	}
	return fd, nil
}

// family returns the socket family and type for a network name.
func family(network string, sa unix.Sockaddr) (fam, sotype int, norm string, err error) {
	switch network {
	case "tcp", "tcp4", "tcp6":
		sotype, norm = unix.SOCK_STREAM, "tcp"
	case "udp", "udp4", "udp6":
		sotype, norm = unix.SOCK_DGRAM, "udp"
	case "unix":
		return unix.AF_UNIX, unix.SOCK_STREAM, "unix", nil
	case "unixgram":
		return unix.AF_UNIX, unix.SOCK_DGRAM, "unixgram", nil
	case "unixpacket":
		return unix.AF_UNIX, unix.SOCK_SEQPACKET, "unixpacket", nil
	default:
		return 0, 0, "", net.UnknownNetworkError(network)
	}
	if _, ok := sa.(*unix.SockaddrInet6); ok {
		return unix.AF_INET6, sotype, norm, nil
	}
	return unix.AF_INET, sotype, norm, nil
}

// Listen binds a listening stream socket: "tcp", "tcp4", "tcp6" on
// host:port, or "unix"/"unixpacket" on a path. The socket file of a Unix listener is removed when its handle
// is closed.
func (d *Driver) Listen(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	if d.closed.Load() {
		return 0, core.Addr{}, errDriverClosed
	}
	_, sa, err := resolve(network, address, true)
	if err != nil {
		return 0, core.Addr{}, err
	}
	fam, sotype, norm, err := family(network, sa)
	if err != nil {
		return 0, core.Addr{}, err
	}
	if sotype == unix.SOCK_DGRAM {
		return 0, core.Addr{}, net.UnknownNetworkError(network + " (Listen takes a stream network; use Bind)")
	}
	fd, err := socket(network, fam, sotype, opts)
	if err != nil && fam == unix.AF_INET6 && isUnspecified(sa) && !strings.HasSuffix(network, "6") {
		// No IPv6 on this machine: every local address is IPv4's.
		sa = &unix.SockaddrInet4{Port: sa.(*unix.SockaddrInet6).Port}
		fam = unix.AF_INET
		fd, err = socket(network, fam, sotype, opts)
	}
	if err != nil {
		return 0, core.Addr{}, err
	}
	fail := func(err error) (core.Handle, core.Addr, error) {
		unix.Close(fd)
		return 0, core.Addr{}, err
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail(os.NewSyscallError("bind", err))
	}
	backlog := opts.Backlog
	if backlog <= 0 {
		backlog = d.backlog
	}
	if err := unix.Listen(fd, backlog); err != nil {
		return fail(os.NewSyscallError("listen", err))
	}
	local, err := unix.Getsockname(fd)
	if err != nil {
		return fail(os.NewSyscallError("getsockname", err))
	}
	h, io, err := d.register(fd, kindListener, norm, 0)
	if err != nil {
		return fail(err)
	}
	if u, ok := sa.(*unix.SockaddrUnix); ok && u.Name != "" && !abstractUnix(u.Name) {
		io.unlinkPath = u.Name
	}
	return h, core.Addr{Net: norm, Addr: sockaddrString(local)}, nil
}

// Bind creates a datagram socket ("udp*", "unixgram") bound to address. A
// "unixgram" socket with an empty address is left unbound (it can send,
// and receive replies only once connected to a bound peer that knows it).
func (d *Driver) Bind(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	if d.closed.Load() {
		return 0, core.Addr{}, errDriverClosed
	}
	_, sa, err := resolve(network, address, true)
	if err != nil {
		return 0, core.Addr{}, err
	}
	fam, sotype, norm, err := family(network, sa)
	if err != nil {
		return 0, core.Addr{}, err
	}
	if sotype != unix.SOCK_DGRAM {
		return 0, core.Addr{}, net.UnknownNetworkError(network + " (Bind takes a datagram network; use Listen)")
	}
	fd, err := socket(network, fam, sotype, opts)
	if err != nil && fam == unix.AF_INET6 && isUnspecified(sa) && !strings.HasSuffix(network, "6") {
		// No IPv6 on this machine: every local address is IPv4's.
		sa = &unix.SockaddrInet4{Port: sa.(*unix.SockaddrInet6).Port}
		fam = unix.AF_INET
		fd, err = socket(network, fam, sotype, opts)
	}
	if err != nil {
		return 0, core.Addr{}, err
	}
	fail := func(err error) (core.Handle, core.Addr, error) {
		unix.Close(fd)
		return 0, core.Addr{}, err
	}
	if u, ok := sa.(*unix.SockaddrUnix); !ok || u.Name != "" {
		if err := unix.Bind(fd, sa); err != nil {
			return fail(os.NewSyscallError("bind", err))
		}
	}
	local, err := unix.Getsockname(fd)
	if err != nil {
		return fail(os.NewSyscallError("getsockname", err))
	}
	h, _, err := d.register(fd, kindDatagram, norm, 0)
	if err != nil {
		return fail(err)
	}
	return h, core.Addr{Net: norm, Addr: sockaddrString(local)}, nil
}

// ConnectDatagram fixes the peer of a datagram socket: Write sends to it,
// Read receives from it only.
func (d *Driver) ConnectDatagram(h core.Handle, address string) error {
	return d.withFD(h, func(io *scheduledIO) error {
		_, sa, err := resolve(io.network, address, false)
		if err != nil {
			return err
		}
		return os.NewSyscallError("connect", unix.Connect(io.fd.n, sa))
	})
}

// JoinGroup joins the multicast group on the named interface ("" lets the
// kernel choose by route).
func (d *Driver) JoinGroup(h core.Handle, group, iface string) error {
	ip := net.ParseIP(group)
	if ip == nil || !ip.IsMulticast() {
		return &net.AddrError{Err: "not a multicast address", Addr: group}
	}
	ifindex := 0
	if iface != "" {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return err
		}
		ifindex = ifi.Index
	}
	return d.withFD(h, func(io *scheduledIO) error {
		if ip4 := ip.To4(); ip4 != nil {
			// struct ip_mreq names the interface by one of its IPv4
			// addresses (the BSDs have no ip_mreqn), as Go's net does.
			mreq := &unix.IPMreq{}
			copy(mreq.Multiaddr[:], ip4)
			if iface != "" {
				a, err := interfaceIPv4(iface)
				if err != nil {
					return err
				}
				copy(mreq.Interface[:], a)
			}
			return os.NewSyscallError("setsockopt", unix.SetsockoptIPMreq(io.fd.n, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq))
		}
		mreq := &unix.IPv6Mreq{Interface: uint32(ifindex)}
		copy(mreq.Multiaddr[:], ip.To16())
		return os.NewSyscallError("setsockopt", unix.SetsockoptIPv6Mreq(io.fd.n, unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, mreq))
	})
}

// Shutdown shuts down one or both directions of a stream (shutdown(2)).
func (d *Driver) Shutdown(h core.Handle, how core.ShutdownHow) error {
	var mode int
	switch how {
	case core.ShutdownRead:
		mode = unix.SHUT_RD
	case core.ShutdownWrite:
		mode = unix.SHUT_WR
	case core.ShutdownBoth:
		mode = unix.SHUT_RDWR
	default:
		return fmt.Errorf("kqueue: unknown shutdown direction %d", how)
	}
	return d.withFD(h, func(io *scheduledIO) error {
		return os.NewSyscallError("shutdown", unix.Shutdown(io.fd.n, mode))
	})
}

// SetOption sets a socket option. Keep-alive periods are rounded up to
// whole seconds and set as both the idle time and the probe interval.
func (d *Driver) SetOption(h core.Handle, opt core.SocketOption, value int) error {
	return d.withFD(h, func(io *scheduledIO) error {
		fd := io.fd.n
		var err error
		switch opt {
		case core.OptNoDelay:
			err = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, value)
		case core.OptKeepAlive:
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_KEEPALIVE, value)
		case core.OptKeepAlivePeriodMillis:
			err = setKeepAlivePeriod(fd, max((value+999)/1000, 1))
		case core.OptLingerSeconds:
			l := &unix.Linger{}
			if value >= 0 {
				l.Onoff, l.Linger = 1, int32(value)
			}
			err = unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, l)
		case core.OptRecvBuffer:
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, value)
		case core.OptSendBuffer:
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, value)
		case core.OptBroadcast:
			err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BROADCAST, value)
		default:
			return fmt.Errorf("kqueue: unknown socket option %d", opt)
		}
		return os.NewSyscallError("setsockopt", err)
	})
}

// LocalAddr returns the address the socket is bound to.
func (d *Driver) LocalAddr(h core.Handle) (core.Addr, error) {
	return d.addr(h, unix.Getsockname, "getsockname")
}

// PeerAddr returns the address of the connected peer.
func (d *Driver) PeerAddr(h core.Handle) (core.Addr, error) {
	return d.addr(h, unix.Getpeername, "getpeername")
}

func (d *Driver) addr(h core.Handle, get func(int) (unix.Sockaddr, error), name string) (core.Addr, error) {
	var a core.Addr
	err := d.withFD(h, func(io *scheduledIO) error {
		sa, err := get(io.fd.n)
		if err != nil {
			return os.NewSyscallError(name, err)
		}
		a = core.Addr{Net: io.network, Addr: sockaddrString(sa)}
		return nil
	})
	return a, err
}

// isUnspecified reports whether sa is the IPv6 any-address.
func isUnspecified(sa unix.Sockaddr) bool {
	s6, ok := sa.(*unix.SockaddrInet6)
	return ok && s6.Addr == [16]byte{}
}

// interfaceIPv4 returns the first IPv4 address of the named interface.
func interfaceIPv4(name string) (net.IP, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip4 := ipn.IP.To4(); ip4 != nil {
				return ip4, nil
			}
		}
	}
	return nil, &net.AddrError{Err: "interface has no IPv4 address", Addr: name}
}

// abstractUnix reports whether a Unix socket path is in Linux's abstract
// namespace (which has no file to remove). Elsewhere "@" is an ordinary
// first character.
func abstractUnix(path string) bool {
	return runtime.GOOS == "linux" && strings.HasPrefix(path, "@")
}
