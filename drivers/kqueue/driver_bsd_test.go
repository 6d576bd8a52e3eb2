//go:build darwin || freebsd || netbsd || openbsd

package kqueue

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/readiness"
)

// Checks of the real back end, cross-compiled by CI and run only on a BSD
// or macOS machine.

func TestTheRealKqueueUnparksAndReportsAReadableSocket(t *testing.T) {
	d, err := New(64)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Unpark()
	if err := d.Park(-1); err != nil {
		t.Fatal(err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	h, _, err := d.register(fds[0], readiness.Stream, "unix", 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 8)
	read := d.Read(h, buf)
	if _, ok := read.Poll(core.NewContext(nil)); ok {
		t.Fatal("a read with no data resolved")
	}
	if _, err := unix.Write(fds[1], []byte("hi")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if res, ok := read.Poll(core.NewContext(nil)); ok {
			if res.Err != nil || string(buf[:res.Value]) != "hi" {
				t.Fatalf("read = %+v", res)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the read never became ready")
		}
		if err := d.Park(100 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
}
