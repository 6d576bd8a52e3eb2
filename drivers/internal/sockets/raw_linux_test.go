//go:build linux

package sockets

import (
	"bytes"
	"net/netip"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func FuzzSockaddrRoundTrip(f *testing.F) {
	f.Add("/tmp/x.sock", "127.0.0.1", uint16(80))
	f.Add("@abstract", "::1", uint16(65535))
	f.Add("", "fe80::1", uint16(0))
	f.Fuzz(func(t *testing.T, path, ip string, port uint16) {
		var raw unix.RawSockaddrAny
		// A file path cannot hold a NUL (an abstract name may, after
		// its leading '@').
		pathOK := bytes.IndexByte([]byte(path), 0) < 0 || (len(path) > 0 && path[0] == '@')
		if n, err := PutRaw(&unix.SockaddrUnix{Name: path}, &raw); err == nil && pathOK {
			back, ok := FromRaw(&raw, n).(*unix.SockaddrUnix)
			if !ok || back.Name != path {
				t.Fatalf("unix %q came back as %#v", path, FromRaw(&raw, n))
			}
		}
		a, err := netip.ParseAddr(ip)
		if err != nil {
			return
		}
		var sa unix.Sockaddr
		if a.Is4() {
			sa = &unix.SockaddrInet4{Port: int(port), Addr: a.As4()}
		} else {
			sa = &unix.SockaddrInet6{Port: int(port), Addr: a.As16()}
		}
		n, err := PutRaw(sa, &raw)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := String(FromRaw(&raw, n)), String(sa); got != want {
			t.Fatalf("%s came back as %s", want, got)
		}
	})
}

// FuzzFromRaw decodes any bytes the kernel could hand back (accept,
// recvmsg) as a socket address of any length up to the buffer's. The
// property: FromRaw never panics; an IP address it returns prints back to
// the same address and port; a Unix name holds no NUL unless abstract,
// and encodes back to what decodes to it again (unless it fills the
// whole path, which only the kernel makes).
func FuzzFromRaw(f *testing.F) {
	for _, sa := range []unix.Sockaddr{
		&unix.SockaddrInet4{Port: 80, Addr: [4]byte{127, 0, 0, 1}},
		&unix.SockaddrInet6{Port: 443, Addr: [16]byte{15: 1}, ZoneId: 1},
		&unix.SockaddrUnix{Name: "/tmp/x.sock"},
		&unix.SockaddrUnix{Name: "@abstract\x00name"},
		&unix.SockaddrUnix{},
	} {
		var raw unix.RawSockaddrAny
		n, err := PutRaw(sa, &raw)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(rawBytes(&raw), n)
	}
	f.Add([]byte{0xff, 0xff}, uint32(2))
	f.Fuzz(func(t *testing.T, data []byte, n uint32) {
		var raw unix.RawSockaddrAny
		b := (*[unix.SizeofSockaddrAny]byte)(unsafe.Pointer(&raw))
		copy(b[:], data)
		n %= unix.SizeofSockaddrAny + 1
		switch sa := FromRaw(&raw, n).(type) {
		case nil:
		case *unix.SockaddrInet4, *unix.SockaddrInet6:
			ap, err := netip.ParseAddrPort(String(sa))
			if err != nil {
				t.Fatalf("%#v prints as %q: %v", sa, String(sa), err)
			}
			var port int
			var addr []byte
			switch s := sa.(type) {
			case *unix.SockaddrInet4:
				port, addr = s.Port, s.Addr[:]
			case *unix.SockaddrInet6:
				port, addr = s.Port, s.Addr[:]
			}
			if int(ap.Port()) != port || !bytes.Equal(ap.Addr().AsSlice(), addr) {
				t.Fatalf("%#v prints as %q", sa, String(sa))
			}
		case *unix.SockaddrUnix:
			if bytes.IndexByte([]byte(sa.Name), 0) >= 0 && sa.Name[0] != '@' {
				t.Fatalf("a path with a NUL: %q", sa.Name)
			}
			if len(sa.Name) == len(unix.RawSockaddrUnix{}.Path) && sa.Name[0] != '@' {
				// Linux binds a path that fills sun_path without a
				// terminator; PutRaw, like x/sys, makes none.
				return
			}
			var again unix.RawSockaddrAny
			m, err := PutRaw(sa, &again)
			if err != nil {
				t.Fatalf("%q decoded but does not encode: %v", sa.Name, err)
			}
			if back := FromRaw(&again, m).(*unix.SockaddrUnix); back.Name != sa.Name {
				t.Fatalf("%q encodes to what decodes as %q", sa.Name, back.Name)
			}
		default:
			t.Fatalf("FromRaw returned a %T", sa)
		}
	})
}

// rawBytes returns the bytes of raw.
func rawBytes(raw *unix.RawSockaddrAny) []byte {
	b := (*[unix.SizeofSockaddrAny]byte)(unsafe.Pointer(raw))
	return bytes.Clone(b[:])
}
