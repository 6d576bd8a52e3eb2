//go:build darwin

package sockets

import "golang.org/x/sys/unix"

// setKeepAlivePeriod sets the keep-alive idle time (TCP_KEEPALIVE on
// darwin) and probe interval.
func setKeepAlivePeriod(fd, secs int) error {
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPALIVE, secs); err != nil {
		return err
	}
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, secs)
}
