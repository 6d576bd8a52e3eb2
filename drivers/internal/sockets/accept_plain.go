//go:build darwin || netbsd || openbsd

package sockets

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// AcceptCall names the system call Accept makes, for errors.
const AcceptCall = "accept"

// Accept accepts a connection on listening socket fd as a non-blocking,
// close-on-exec socket and returns it with the peer's address. Errors are
// the bare errno. golang.org/x/sys has no accept4 (or paccept) for these
// systems, so the flags are set after the call, under syscall.ForkLock as
// Go's net does.
func Accept(fd int) (int, unix.Sockaddr, error) {
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
