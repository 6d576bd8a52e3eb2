//go:build darwin || netbsd || openbsd

package kqueue

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysAccept accepts a connection as a non-blocking, close-on-exec socket.
// golang.org/x/sys has no accept4 (or paccept) for these systems, so the
// flags are set after the call, under syscall.ForkLock as Go's net does.
func sysAccept(fd int) (int, unix.Sockaddr, error) {
	syscall.ForkLock.RLock()
	nfd, sa, err := unix.Accept(fd)
	if err == nil {
		unix.CloseOnExec(nfd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		return -1, nil, err
	}
	if err := unix.SetNonblock(nfd, true); err != nil {
		unix.Close(nfd)
		return -1, nil, err
	}
	return nfd, sa, nil
}
