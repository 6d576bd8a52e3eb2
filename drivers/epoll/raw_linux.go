//go:build linux

package epoll

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The hot system calls are made with RawSyscall, which skips Go's
// entersyscall/exitsyscall bookkeeping. That is only correct for calls that
// cannot block, and these cannot: every descriptor the driver registers is
// non-blocking, so read and write return EAGAIN instead of waiting. (A
// blocking call made this way would hold its P for its whole duration and
// could stall a garbage collection.) epoll_wait, which does block, goes
// through the ordinary path.

func rawRead(fd int, p []byte) (int, error) {
	r, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), bufPtr(p), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(r), nil
}

func rawWrite(fd int, p []byte) (int, error) {
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
