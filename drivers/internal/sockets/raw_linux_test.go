//go:build linux

package sockets

import (
	"bytes"
	"net/netip"
	"testing"

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
