//go:build darwin || freebsd || netbsd || openbsd || linux

package sockets

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fuzzNetworks are the networks FuzzResolve picks from: every one Resolve
// knows, and one it does not.
var fuzzNetworks = []string{"tcp", "tcp4", "tcp6", "udp", "udp4", "udp6", "unix", "unixgram", "unixpacket", "ip"}

// FuzzResolve resolves any address on any network without a resolver (a
// host name is looked up by a stub that fails). The property: Resolve
// never panics; what it returns is consistent (the socket address holds
// the address and port, of the family the network asks for); a Unix path
// is taken as it is unless the kernel could not bind it as given; and for
// the IP networks it agrees with Go's net.ResolveTCPAddr and
// ResolveUDPAddr whenever those need no resolver either (a literal or
// empty host), and looks up exactly the host a name names otherwise.
func FuzzResolve(f *testing.F) {
	for _, s := range []struct {
		network   uint8
		address   string
		listening bool
	}{
		{0, "127.0.0.1:80", false}, {0, "[::1]:443", true}, {0, ":0", true}, {0, "", true}, {0, "", false},
		{1, "localhost:http", false}, {0, "example.com:80", false}, {2, "[fe80::1%lo]:1", false},
		{2, "[fe80::1%99999999999]:1", false}, {0, "[::ffff:1.2.3.4]:5", false}, {1, "[::]:8", true},
		{2, "0.0.0.0:9", true}, {3, "1.2.3.4:70000", false}, {4, "1.2.3.4:+80", false}, {5, "[1.2.3.4]:80", false},
		{0, "1.2.3.4%eth0:80", false}, {0, "[::1]", false}, {0, "1.2.3.4:-0", false},
		{6, "/tmp/x.sock", true}, {7, "@abstract", true}, {8, "a\x00b", true}, {6, strings.Repeat("x", 120), true},
		{6, "", true}, {9, "1.2.3.4:80", false},
	} {
		f.Add(s.network, s.address, s.listening)
	}
	f.Fuzz(func(t *testing.T, which uint8, address string, listening bool) {
		network := fuzzNetworks[int(which)%len(fuzzNetworks)]
		var looked []string
		stub := func(host string, _ byte) (netip.Addr, error) {
			looked = append(looked, host)
			return netip.Addr{}, &net.DNSError{Err: "no lookups in this test", Name: host, IsNotFound: true}
		}
		ap, sa, err := resolve(network, address, listening, stub)
		switch network {
		case "unix", "unixgram", "unixpacket":
			checkUnixResolve(t, address, sa, err)
			return
		case "ip":
			var unknown net.UnknownNetworkError
			if !errors.As(err, &unknown) {
				t.Fatalf("network ip: %v, want an UnknownNetworkError", err)
			}
			return
		}
		if err == nil {
			checkIPSockaddr(t, network, ap, sa)
		}

		if address == "" {
			// Go listens on every address for "", and refuses to dial it.
			if listening != (err == nil) || (err == nil && (ap.Port() != 0 || !ap.Addr().IsUnspecified())) {
				t.Fatalf("%s %q (listening %v): %v %v", network, address, listening, ap, err)
			}
			return
		}
		host, _, splitErr := net.SplitHostPort(address)
		if splitErr != nil {
			if err == nil {
				t.Fatalf("%s %q: resolved to %v, but it is no host:port (%v)", network, address, ap, splitErr)
			}
			return
		}
		_, literalErr := netip.ParseAddr(host)
		switch {
		case host == "localhost":
			if len(looked) != 0 {
				t.Fatalf("localhost was looked up")
			}
			return
		case host != "" && literalErr != nil:
			// A name: looked up exactly, if the port is good.
			if err == nil || len(looked) > 1 || (len(looked) == 1 && looked[0] != host) {
				t.Fatalf("%s %q: looked up %q, got %v %v", network, address, looked, ap, err)
			}
			return
		}
		if len(looked) != 0 {
			t.Fatalf("%s %q: a literal host was looked up: %q", network, address, looked)
		}
		agreeWithGo(t, network, address, host, listening, ap, err)
	})
}

// checkUnixResolve checks the result of resolving a Unix address: the
// name as given, or an error because the kernel cannot bind it as given.
func checkUnixResolve(t *testing.T, address string, sa unix.Sockaddr, err error) {
	t.Helper()
	size := len(unix.RawSockaddrUnix{}.Path)
	bindable := len(address) < size && !strings.ContainsRune(address, 0)
	if abstractUnix(address) {
		bindable = len(address) <= size
	}
	if bindable != (err == nil) {
		t.Fatalf("unix %q (%d bytes): %v", address, len(address), err)
	}
	if err != nil {
		var ae *net.AddrError
		if !errors.As(err, &ae) || ae.Addr != address {
			t.Fatalf("unix %q: %v is no *net.AddrError naming the address", address, err)
		}
		return
	}
	if u, ok := sa.(*unix.SockaddrUnix); !ok || u.Name != address {
		t.Fatalf("unix %q resolved to %#v", address, sa)
	}
}

// checkIPSockaddr checks that sa holds ap, in the family network asks for,
// and prints back as ap.
func checkIPSockaddr(t *testing.T, network string, ap netip.AddrPort, sa unix.Sockaddr) {
	t.Helper()
	want := network[len(network)-1]
	ip := ap.Addr()
	switch s := sa.(type) {
	case *unix.SockaddrInet4:
		if want == '6' || !ip.Is4() || s.Addr != ip.As4() || s.Port != int(ap.Port()) {
			t.Fatalf("%s: %v resolved to %#v", network, ap, s)
		}
	case *unix.SockaddrInet6:
		if want == '4' || ip.Is4() || ip.Is4In6() || s.Addr != ip.As16() || s.Port != int(ap.Port()) || s.ZoneId != zoneID(ip.Zone()) {
			t.Fatalf("%s: %v resolved to %#v", network, ap, s)
		}
	default:
		t.Fatalf("%s: %v resolved to a %T", network, ap, sa)
	}
	back, err := netip.ParseAddrPort(String(sa))
	if err != nil || back.Port() != ap.Port() || back.Addr().WithZone("") != ip.WithZone("") {
		t.Fatalf("%s: %v prints as %q, which reads back as %v (%v)", network, ap, String(sa), back, err)
	}
}

// agreeWithGo checks a resolved IP address with a literal or empty host
// against Go's net, which resolves those without a resolver too.
func agreeWithGo(t *testing.T, network, address, host string, listening bool, ap netip.AddrPort, err error) {
	t.Helper()
	var goIP net.IP
	var goPort int
	var goZone string
	var goErr error
	if strings.HasPrefix(network, "tcp") {
		var a *net.TCPAddr
		if a, goErr = net.ResolveTCPAddr(network, address); goErr == nil {
			goIP, goPort, goZone = a.IP, a.Port, a.Zone
		}
	} else {
		var a *net.UDPAddr
		if a, goErr = net.ResolveUDPAddr(network, address); goErr == nil {
			goIP, goPort, goZone = a.IP, a.Port, a.Zone
		}
	}
	if (err == nil) != (goErr == nil) {
		t.Fatalf("%s %q: resolved to %v, %v; Go's net: %v", network, address, ap, err, goErr)
	}
	if err != nil {
		return
	}
	if goPort != int(ap.Port()) {
		t.Fatalf("%s %q: port %d, Go's net %d", network, address, ap.Port(), goPort)
	}
	got := ap.Addr()
	if host == "" {
		// Go leaves the IP out; Resolve fills in what it means.
		if goIP != nil || (listening && !got.IsUnspecified()) || (!listening && !got.IsLoopback()) {
			t.Fatalf("%s %q (listening %v): %v, Go's net %v", network, address, listening, got, goIP)
		}
		return
	}
	goAddr, ok := netip.AddrFromSlice(goIP)
	if !ok {
		t.Fatalf("%s %q: Go's net resolved to %v", network, address, goIP)
	}
	goAddr = goAddr.Unmap()
	if goAddr.Is6() {
		goAddr = goAddr.WithZone(goZone)
	}
	if got != goAddr {
		t.Fatalf("%s %q: %v, Go's net %v", network, address, got, goAddr)
	}
}
