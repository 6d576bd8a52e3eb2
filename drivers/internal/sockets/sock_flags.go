//go:build freebsd || netbsd || openbsd

package sockets

import "golang.org/x/sys/unix"

// sysSocket creates a non-blocking, close-on-exec socket in one call.
func sysSocket(family, sotype int) (int, error) {
	return unix.Socket(family, sotype|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}
