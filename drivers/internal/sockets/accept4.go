//go:build freebsd || linux

package sockets

import "golang.org/x/sys/unix"

// AcceptCall names the system call Accept makes, for errors.
const AcceptCall = "accept4"

// Accept accepts a connection on listening socket fd as a non-blocking,
// close-on-exec socket, in one call (accept4), and returns it with the
// peer's address. Errors are the bare errno.
func Accept(fd int) (int, unix.Sockaddr, error) {
	return unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}
