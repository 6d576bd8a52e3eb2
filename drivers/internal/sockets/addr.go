//go:build darwin || freebsd || netbsd || openbsd || linux

package sockets

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/netip"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dualStack says whether an IPv6 socket can serve IPv4 too. OpenBSD's
// cannot (it has no IPv4-mapped addresses on sockets), so there the
// wildcard address of "tcp" and "udp" is IPv4's, as in Go's net.
const dualStack = runtime.GOOS != "openbsd"

// Resolve turns a network and address into a socket address and, for the
// IP networks, the address and port it holds. For the IP
// networks, address is host:port; an empty host means every local address
// when listening (dual-stack IPv6 for "tcp"/"udp", IPv4 for "tcp4") and
// the loopback address when connecting, as in Go's net, and so does an
// empty address when listening (with a port the kernel picks); "localhost"
// is the loopback address without a lookup; other names go through Go's
// resolver, which may block. For the Unix networks address is a path, or
// on Linux an abstract name ("@name"); a path that holds a NUL byte or is
// too long for a socket address is an error here (Go's net would bind the
// path up to the NUL, or fail in bind with EINVAL).
func Resolve(network, address string, listening bool) (netip.AddrPort, unix.Sockaddr, error) {
	return resolve(network, address, listening, lookup)
}

// resolve is Resolve with the host name lookup as a parameter, so that
// tests can resolve without a resolver.
func resolve(network, address string, listening bool, lookupHost func(host string, want byte) (netip.Addr, error)) (netip.AddrPort, unix.Sockaddr, error) {
	switch network {
	case "unix", "unixgram", "unixpacket":
		if err := checkUnixPath(address); err != nil {
			return netip.AddrPort{}, nil, err
		}
		return netip.AddrPort{}, &unix.SockaddrUnix{Name: address}, nil
	case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
	default:
		return netip.AddrPort{}, nil, net.UnknownNetworkError(network)
	}
	if address == "" {
		if !listening {
			return netip.AddrPort{}, nil, &net.AddrError{Err: "missing address", Addr: address}
		}
		address = ":0"
	}
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return netip.AddrPort{}, nil, err
	}
	port, err := parsePort(network, portStr)
	if err != nil {
		return netip.AddrPort{}, nil, err
	}
	want := network[len(network)-1] // '4', '6' or a letter
	var ip netip.Addr
	switch {
	case host == "" && listening:
		if want == '4' || (want != '6' && !dualStack) {
			ip = netip.IPv4Unspecified()
		} else {
			ip = netip.IPv6Unspecified()
		}
	case host == "" || host == "localhost":
		if want == '6' {
			ip = netip.IPv6Loopback()
		} else {
			ip = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
	default:
		if ip, err = netip.ParseAddr(host); err != nil {
			ip, err = lookupHost(host, want)
			if err != nil {
				return netip.AddrPort{}, nil, err
			}
		}
	}
	if ip.Is4In6() {
		ip = ip.Unmap()
	}
	if want == '4' && ip.WithZone("") == netip.IPv6Unspecified() {
		// Every address, as an IPv4 network can have it (Go's net does
		// the same).
		ip = netip.IPv4Unspecified()
	}
	switch {
	case want == '4' && !ip.Is4():
		return netip.AddrPort{}, nil, &net.AddrError{Err: "no suitable address found", Addr: address}
	case want == '6' && ip.Is4():
		return netip.AddrPort{}, nil, &net.AddrError{Err: "no suitable address found", Addr: address}
	}
	ap := netip.AddrPortFrom(ip, port)
	if ip.Is4() {
		return ap, &unix.SockaddrInet4{Port: int(port), Addr: ip.As4()}, nil
	}
	sa := &unix.SockaddrInet6{Port: int(port), Addr: ip.As16(), ZoneId: zoneID(ip.Zone())}
	return ap, sa, nil
}

// zoneID returns the scope of an IPv6 zone: its number, or the index of
// the interface it names, or 0 (no scope) for neither, as in Go's net. A
// number beyond 32 bits is no scope rather than the scope its low bits
// would make.
func zoneID(zone string) uint32 {
	if zone == "" {
		return 0
	}
	if n, err := strconv.Atoi(zone); err == nil && n >= 0 && uint64(n) <= math.MaxUint32 {
		return uint32(n)
	}
	if ifi, err := net.InterfaceByName(zone); err == nil {
		return uint32(ifi.Index)
	}
	return 0
}

// checkUnixPath reports a Unix socket address the kernel would not bind
// as given: a path holding a NUL byte (the kernel would read it only up to
// the NUL, a different path, and closing would then remove the wrong
// file), or a name longer than a socket address holds. An abstract name
// may hold NULs, and fills the address without a terminator.
func checkUnixPath(name string) error {
	size := len(unix.RawSockaddrUnix{}.Path)
	if abstractUnix(name) {
		if len(name) > size {
			return &net.AddrError{Err: fmt.Sprintf("abstract Unix socket name is %d bytes, longer than the %d a socket address holds",
				len(name), size), Addr: name}
		}
		return nil
	}
	if strings.IndexByte(name, 0) >= 0 {
		return &net.AddrError{Err: "Unix socket path holds a NUL byte", Addr: name}
	}
	if len(name) >= size {
		return &net.AddrError{Err: fmt.Sprintf("Unix socket path is %d bytes, longer than the %d a socket address holds",
			len(name), size-1), Addr: name}
	}
	return nil
}

func parsePort(network, s string) (uint16, error) {
	if n, err := strconv.ParseUint(s, 10, 16); err == nil {
		return uint16(n), nil
	}
	n, err := net.LookupPort(network, s)
	if err != nil {
		return 0, err
	}
	return uint16(n), nil
}

func lookup(host string, want byte) (netip.Addr, error) {
	family := "ip"
	switch want {
	case '4':
		family = "ip4"
	case '6':
		family = "ip6"
	}
	ips, err := net.DefaultResolver.LookupNetIP(context.Background(), family, host)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return ip.Unmap(), nil // prefer IPv4, like Go's default dialer order for "tcp"
		}
	}
	if len(ips) == 0 {
		return netip.Addr{}, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return ips[0], nil
}

// String formats a socket address the way Go's net prints it (host:port,
// or a Unix socket's path); it returns "" for nil or another family.
func String(sa unix.Sockaddr) string {
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port)).String()
	case *unix.SockaddrInet6:
		ip := netip.AddrFrom16(sa.Addr)
		if sa.ZoneId != 0 {
			if ifi, err := net.InterfaceByIndex(int(sa.ZoneId)); err == nil {
				ip = ip.WithZone(ifi.Name)
			} else {
				ip = ip.WithZone(strconv.Itoa(int(sa.ZoneId)))
			}
		}
		return netip.AddrPortFrom(ip, uint16(sa.Port)).String()
	case *unix.SockaddrUnix:
		return sa.Name
	}
	return ""
}
