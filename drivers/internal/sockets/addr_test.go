//go:build darwin || freebsd || netbsd || openbsd || linux

package sockets

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// A Unix path with a NUL byte in it is refused: the kernel would bind the
// path up to the NUL, and closing the listener would then remove a file
// that is not there and leave the socket file behind.
func TestAUnixPathWithANulByteIsRefusedRatherThanCut(t *testing.T) {
	dir := t.TempDir()
	b, err := Listen("unix", filepath.Join(dir, "a\x00b"), core.SocketOptions{}, 8)
	if err == nil {
		unix.Close(b.FD)
		t.Fatalf("listening on a path with a NUL byte succeeded, bound to %q", b.Local.Addr)
	}
	if !strings.Contains(err.Error(), "Unix socket path holds a NUL byte") {
		t.Errorf("error %q does not say why", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); !os.IsNotExist(err) {
		t.Errorf("a socket file was created at the path cut at the NUL: %v", err)
	}
}

func TestAUnixPathTooLongForASocketAddressNamesTheLimit(t *testing.T) {
	size := len(unix.RawSockaddrUnix{}.Path)
	long := "/" + strings.Repeat("x", size)
	_, err := Listen("unix", long, core.SocketOptions{}, 8)
	if err == nil {
		t.Fatal("listening on a path longer than a socket address succeeded")
	}
	for _, want := range []string{"Unix socket path is", "longer than the"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// As in Go's net, listening on "" is listening on every address with a
// port the kernel picks.
func TestListeningOnAnEmptyAddressTakesEveryAddressAndAnyPort(t *testing.T) {
	for _, network := range []string{"tcp", "tcp4"} {
		b, err := Listen(network, "", core.SocketOptions{}, 8)
		if err != nil {
			t.Fatalf("%s: %v", network, err)
		}
		unix.Close(b.FD)
		if strings.HasSuffix(b.Local.Addr, ":0") || !(strings.HasPrefix(b.Local.Addr, "[::]:") || strings.HasPrefix(b.Local.Addr, "0.0.0.0:")) {
			t.Errorf("%s: bound to %s", network, b.Local.Addr)
		}
	}
	if _, _, err := Resolve("tcp", "", false); err == nil || !strings.Contains(err.Error(), "missing address") {
		t.Errorf("connecting to \"\": %v, want missing address", err)
	}
}
