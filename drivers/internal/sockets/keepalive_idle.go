//go:build freebsd || netbsd || linux

package sockets

import "golang.org/x/sys/unix"

// setKeepAlivePeriod sets the keep-alive idle time and probe interval.
func setKeepAlivePeriod(fd, secs int) error {
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, secs); err != nil {
		return err
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs)
}
