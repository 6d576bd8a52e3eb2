//go:build linux

package iouring

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// resolve turns a network and address into a socket address. For the IP
// networks, address is host:port; an empty host means every local address
// when listening (dual-stack IPv6 for "tcp"/"udp", IPv4 for "tcp4") and
// the loopback address when connecting, as in Go's net; "localhost" is
// the loopback address without a lookup; other names go through Go's
// resolver, which may block. For the Unix networks address is a path.
func resolve(network, address string, listening bool) (netip.AddrPort, unix.Sockaddr, error) {
	switch network {
	case "unix", "unixgram", "unixpacket":
		return netip.AddrPort{}, &unix.SockaddrUnix{Name: address}, nil
	case "tcp", "tcp4", "tcp6", "udp", "udp4", "udp6":
	default:
		return netip.AddrPort{}, nil, net.UnknownNetworkError(network)
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
		if want == '4' {
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
			ip, err = lookup(host, want)
			if err != nil {
				return netip.AddrPort{}, nil, err
			}
		}
	}
	if ip.Is4In6() {
		ip = ip.Unmap()
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
	sa := &unix.SockaddrInet6{Port: int(port), Addr: ip.As16()}
	if z := ip.Zone(); z != "" {
		if n, err := strconv.Atoi(z); err == nil {
			sa.ZoneId = uint32(n)
		} else if ifi, err := net.InterfaceByName(z); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return ap, sa, nil
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

// sockaddrString formats a socket address the way Go's net prints it.
func sockaddrString(sa unix.Sockaddr) string {
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

// The kernel reads and writes socket addresses in their raw form; these
// convert between it and unix.Sockaddr (x/sys keeps its own conversion
// unexported).

// rawSockaddr writes sa into raw and returns its length.
func rawSockaddr(sa unix.Sockaddr, raw *unix.RawSockaddrAny) (uint32, error) {
	*raw = unix.RawSockaddrAny{}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		r := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
		r.Family = unix.AF_INET
		putPort(&r.Port, sa.Port)
		r.Addr = sa.Addr
		return unix.SizeofSockaddrInet4, nil
	case *unix.SockaddrInet6:
		r := (*unix.RawSockaddrInet6)(unsafe.Pointer(raw))
		r.Family = unix.AF_INET6
		putPort(&r.Port, sa.Port)
		r.Addr = sa.Addr
		r.Scope_id = sa.ZoneId
		return unix.SizeofSockaddrInet6, nil
	case *unix.SockaddrUnix:
		r := (*unix.RawSockaddrUnix)(unsafe.Pointer(raw))
		name := sa.Name
		if len(name) > len(r.Path) || (len(name) == len(r.Path) && name[0] != '@') {
			return 0, unix.EINVAL
		}
		r.Family = unix.AF_UNIX
		for i := range len(name) {
			r.Path[i] = int8(name[i])
		}
		// The family, the path and its terminating NUL; an abstract
		// name ("@name", stored with a leading NUL) has no terminator.
		n := uint32(2)
		if len(name) > 0 {
			n += uint32(len(name)) + 1
		}
		if len(name) > 0 && name[0] == '@' {
			r.Path[0] = 0
			n--
		}
		return n, nil
	}
	return 0, unix.EAFNOSUPPORT
}

func putPort(p *uint16, port int) {
	b := (*[2]byte)(unsafe.Pointer(p))
	b[0], b[1] = byte(port>>8), byte(port)
}

func getPort(p *uint16) int {
	b := (*[2]byte)(unsafe.Pointer(p))
	return int(b[0])<<8 | int(b[1])
}

// sockaddrOf decodes the first n bytes of raw, as the kernel filled them
// in (accept, recvmsg), or returns nil for an unnamed address.
func sockaddrOf(raw *unix.RawSockaddrAny, n uint32) unix.Sockaddr {
	if n < 2 {
		return nil
	}
	switch raw.Addr.Family {
	case unix.AF_INET:
		r := (*unix.RawSockaddrInet4)(unsafe.Pointer(raw))
		return &unix.SockaddrInet4{Port: getPort(&r.Port), Addr: r.Addr}
	case unix.AF_INET6:
		r := (*unix.RawSockaddrInet6)(unsafe.Pointer(raw))
		return &unix.SockaddrInet6{Port: getPort(&r.Port), Addr: r.Addr, ZoneId: r.Scope_id}
	case unix.AF_UNIX:
		r := (*unix.RawSockaddrUnix)(unsafe.Pointer(raw))
		plen := int(n) - 2
		if plen <= 0 {
			return &unix.SockaddrUnix{}
		}
		plen = min(plen, len(r.Path))
		if r.Path[0] == 0 {
			// Abstract: the bytes after the leading NUL, all of them.
			b := make([]byte, plen)
			for i := range plen {
				b[i] = byte(r.Path[i])
			}
			b[0] = '@'
			return &unix.SockaddrUnix{Name: string(b)}
		}
		b := make([]byte, 0, plen)
		for i := 0; i < plen && r.Path[i] != 0; i++ {
			b = append(b, byte(r.Path[i]))
		}
		return &unix.SockaddrUnix{Name: string(b)}
	}
	return nil
}
