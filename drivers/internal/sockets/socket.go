//go:build darwin || freebsd || netbsd || openbsd || linux

package sockets

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// Socket creates a non-blocking, close-on-exec socket of family and sotype
// with opts applied. An IPv6 socket serves IPv4 too (dual stack, as Go's
// net does for "tcp" and "udp") unless network ends in "6". The error is an
// *os.SyscallError; on failure no descriptor is left open.
func Socket(network string, family, sotype int, opts core.SocketOptions) (int, error) {
	fd, err := sysSocket(family, sotype)
	if err != nil {
		return -1, os.NewSyscallError("socket", err)
	}
	if family == unix.AF_INET6 {
		// Dual stack, as Go's net does for "tcp" and "udp": an IPv6
		// socket also serves IPv4, unless the network is "tcp6"/"udp6".
		// (OpenBSD has no dual-stack sockets and refuses 0; Resolve
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

// Family returns the socket family and type for a network name and the
// socket address Resolve made of its address, and the network as Go's net
// names its addresses ("tcp", "udp", "unix", "unixgram", "unixpacket").
// An unknown network is a net.UnknownNetworkError.
func Family(network string, sa unix.Sockaddr) (fam, sotype int, norm string, err error) {
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

// Bound is a socket that Listen or Bind created: the caller owns FD and
// must close it (or hand it to a driver that will).
type Bound struct {
	// FD is the socket's descriptor, non-blocking and close-on-exec.
	FD int
	// Net is the network as Go's net names its addresses ("tcp", "udp",
	// "unix", "unixgram", "unixpacket").
	Net string
	// Local is the address the socket is bound to.
	Local core.Addr
	// UnlinkPath is the filesystem path of a Unix listener's socket file,
	// which the driver removes when it closes the handle (as Go's net
	// does); it is empty for every other socket, including Linux's
	// abstract names ("@name"), which have no file.
	UnlinkPath string
}

// Listen creates a listening stream socket: "tcp", "tcp4", "tcp6" on
// host:port, or "unix"/"unixpacket" on a path ("@name" is Linux's abstract
// namespace). backlog is the listen queue's length when opts.Backlog is not
// positive. A datagram network is a net.UnknownNetworkError.
func Listen(network, address string, opts core.SocketOptions, backlog int) (Bound, error) {
	b, sa, err := open(network, address, opts, false)
	if err != nil {
		return Bound{}, err
	}
	fail := func(err error) (Bound, error) {
		unix.Close(b.FD)
		return Bound{}, err
	}
	if err := unix.Bind(b.FD, sa); err != nil {
		return fail(os.NewSyscallError("bind", err))
	}
	if opts.Backlog > 0 {
		backlog = opts.Backlog
	}
	if err := unix.Listen(b.FD, backlog); err != nil {
		return fail(os.NewSyscallError("listen", err))
	}
	if b.Local, err = LocalAddr(b.FD, b.Net); err != nil {
		return fail(err)
	}
	if u, ok := sa.(*unix.SockaddrUnix); ok && u.Name != "" && !abstractUnix(u.Name) {
		b.UnlinkPath = u.Name
	}
	return b, nil
}

// Bind creates a datagram socket ("udp*", "unixgram") bound to address. A
// "unixgram" socket with an empty address is left unbound (it can send,
// and receive replies only once connected to a bound peer that knows it).
// A stream network is a net.UnknownNetworkError.
func Bind(network, address string, opts core.SocketOptions) (Bound, error) {
	b, sa, err := open(network, address, opts, true)
	if err != nil {
		return Bound{}, err
	}
	if u, ok := sa.(*unix.SockaddrUnix); !ok || u.Name != "" {
		if err := unix.Bind(b.FD, sa); err != nil {
			unix.Close(b.FD)
			return Bound{}, os.NewSyscallError("bind", err)
		}
	}
	if b.Local, err = LocalAddr(b.FD, b.Net); err != nil {
		unix.Close(b.FD)
		return Bound{}, err
	}
	return b, nil
}

// open resolves a local address and creates the socket Listen (datagram
// false) or Bind (datagram true) binds to it.
func open(network, address string, opts core.SocketOptions, datagram bool) (Bound, unix.Sockaddr, error) {
	_, sa, err := Resolve(network, address, true)
	if err != nil {
		return Bound{}, nil, err
	}
	fam, sotype, norm, err := Family(network, sa)
	if err != nil {
		return Bound{}, nil, err
	}
	switch {
	case datagram && sotype != unix.SOCK_DGRAM:
		return Bound{}, nil, net.UnknownNetworkError(network + " (Bind takes a datagram network; use Listen)")
	case !datagram && sotype == unix.SOCK_DGRAM:
		return Bound{}, nil, net.UnknownNetworkError(network + " (Listen takes a stream network; use Bind)")
	}
	fd, err := Socket(network, fam, sotype, opts)
	if err != nil && fam == unix.AF_INET6 && isUnspecified(sa) && !strings.HasSuffix(network, "6") {
		// No IPv6 on this machine: every local address is IPv4's.
		sa = &unix.SockaddrInet4{Port: sa.(*unix.SockaddrInet6).Port}
		fam = unix.AF_INET
		fd, err = Socket(network, fam, sotype, opts)
	}
	if err != nil {
		return Bound{}, nil, err
	}
	return Bound{FD: fd, Net: norm}, sa, nil
}

// ConnectDatagram fixes the peer of datagram socket fd of network: writes
// send to it, reads receive from it only.
func ConnectDatagram(fd int, network, address string) error {
	_, sa, err := Resolve(network, address, false)
	if err != nil {
		return err
	}
	return os.NewSyscallError("connect", unix.Connect(fd, sa))
}

// Group is a multicast group to join, parsed by ParseGroup.
type Group struct {
	ip      net.IP
	iface   string
	ifindex int
}

// ParseGroup checks that group is a multicast address and looks up the
// named interface ("" lets the kernel choose by route).
func ParseGroup(group, iface string) (Group, error) {
	ip := net.ParseIP(group)
	if ip == nil || !ip.IsMulticast() {
		return Group{}, &net.AddrError{Err: "not a multicast address", Addr: group}
	}
	g := Group{ip: ip, iface: iface}
	if iface != "" {
		ifi, err := net.InterfaceByName(iface)
		if err != nil {
			return Group{}, err
		}
		g.ifindex = ifi.Index
	}
	return g, nil
}

// Join makes socket fd a member of the group.
func (g Group) Join(fd int) error {
	if ip4 := g.ip.To4(); ip4 != nil {
		return joinIPv4(fd, ip4, g.iface, g.ifindex)
	}
	mreq := &unix.IPv6Mreq{Interface: uint32(g.ifindex)}
	copy(mreq.Multiaddr[:], g.ip.To16())
	return os.NewSyscallError("setsockopt", unix.SetsockoptIPv6Mreq(fd, unix.IPPROTO_IPV6, unix.IPV6_JOIN_GROUP, mreq))
}

// ShutdownMode returns shutdown(2)'s argument for how; an unknown direction
// is an error naming driver.
func ShutdownMode(driver string, how core.ShutdownHow) (int, error) {
	switch how {
	case core.ShutdownRead:
		return unix.SHUT_RD, nil
	case core.ShutdownWrite:
		return unix.SHUT_WR, nil
	case core.ShutdownBoth:
		return unix.SHUT_RDWR, nil
	}
	return 0, fmt.Errorf("%s: unknown shutdown direction %d", driver, how)
}

// Shutdown shuts down the directions mode (from ShutdownMode) of fd.
func Shutdown(fd, mode int) error {
	return os.NewSyscallError("shutdown", unix.Shutdown(fd, mode))
}

// SetOption sets a socket option on fd. Keep-alive periods are rounded up
// to whole seconds and set as both the idle time and the probe interval
// (OpenBSD, which has no per-socket timing, fails with ENOPROTOOPT, as Go's
// net does). An unknown option is an error naming driver.
func SetOption(driver string, fd int, opt core.SocketOption, value int) error {
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
		return fmt.Errorf("%s: unknown socket option %d", driver, opt)
	}
	return os.NewSyscallError("setsockopt", err)
}

// LocalAddr returns the address socket fd of network is bound to.
func LocalAddr(fd int, network string) (core.Addr, error) {
	return addr(fd, network, unix.Getsockname, "getsockname")
}

// PeerAddr returns the address of the peer connected to socket fd.
func PeerAddr(fd int, network string) (core.Addr, error) {
	return addr(fd, network, unix.Getpeername, "getpeername")
}

func addr(fd int, network string, get func(int) (unix.Sockaddr, error), name string) (core.Addr, error) {
	sa, err := get(fd)
	if err != nil {
		return core.Addr{}, os.NewSyscallError(name, err)
	}
	return core.Addr{Net: network, Addr: String(sa)}, nil
}

// isUnspecified reports whether sa is the IPv6 any-address.
func isUnspecified(sa unix.Sockaddr) bool {
	s6, ok := sa.(*unix.SockaddrInet6)
	return ok && s6.Addr == [16]byte{}
}

// abstractUnix reports whether a Unix socket path is in Linux's abstract
// namespace (which has no file to remove). Elsewhere "@" is an ordinary
// first character.
func abstractUnix(path string) bool {
	return runtime.GOOS == "linux" && strings.HasPrefix(path, "@")
}
