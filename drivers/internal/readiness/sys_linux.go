//go:build linux

package readiness

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The hot system calls are made with RawSyscall, which skips Go's
// entersyscall/exitsyscall bookkeeping. That is only correct for calls that
// cannot block, and these cannot: every descriptor a readiness driver
// registers is non-blocking, so read and write return EAGAIN instead of
// waiting. (A blocking call made this way would hold its P for its whole
// duration and could stall a garbage collection.) The driver's wait for
// events, which does block, goes through the ordinary path.

func sysRead(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), bufPtr(p), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func sysWrite(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), bufPtr(p), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func bufPtr(p []byte) uintptr {
	if len(p) == 0 {
		return 0
	}
	return uintptr(unsafe.Pointer(&p[0]))
}

func sysReadv(fd int, bufs [][]byte) (int, error)  { return unix.Readv(fd, bufs) }
func sysWritev(fd int, bufs [][]byte) (int, error) { return unix.Writev(fd, bufs) }
