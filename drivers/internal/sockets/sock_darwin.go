//go:build darwin

package sockets

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysSocket creates a non-blocking, close-on-exec socket. Darwin has no
// SOCK_NONBLOCK or SOCK_CLOEXEC, so the flags are set after the call,
// under syscall.ForkLock as Go's net does, so that no fork in between
// inherits the descriptor.
func sysSocket(family, sotype int) (int, error) {
	syscall.ForkLock.RLock()
	fd, err := unix.Socket(family, sotype, 0)
	if err == nil {
		unix.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, err
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return -1, err
	}
	// A write to a closed peer raises SIGPIPE; Go's runtime ignores it
	// for descriptors other than 1 and 2, and the option saves the
	// signal altogether (darwin has no MSG_NOSIGNAL for write(2)).
	_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_NOSIGPIPE, 1)
	return fd, nil
}
