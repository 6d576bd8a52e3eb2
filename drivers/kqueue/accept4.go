//go:build freebsd || linux

package kqueue

import "golang.org/x/sys/unix"

// sysAccept accepts a connection as a non-blocking, close-on-exec socket
// in one call (accept4).
func sysAccept(fd int) (int, unix.Sockaddr, error) {
	return unix.Accept4(fd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
}
