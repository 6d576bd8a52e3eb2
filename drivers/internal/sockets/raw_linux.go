//go:build linux

package sockets

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel reads and writes socket addresses in their raw form; these
// convert between it and unix.Sockaddr (x/sys keeps its own conversion
// unexported).

// PutRaw writes sa into raw in the kernel's form and returns its length.
// A Unix path too long for sockaddr_un is EINVAL, another family
// EAFNOSUPPORT.
func PutRaw(sa unix.Sockaddr, raw *unix.RawSockaddrAny) (uint32, error) {
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

// FromRaw decodes the first n bytes of raw, as the kernel filled them in
// (accept, recvmsg), or returns nil for an unnamed address.
func FromRaw(raw *unix.RawSockaddrAny, n uint32) unix.Sockaddr {
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
