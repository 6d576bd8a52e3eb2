//go:build openbsd

package sockets

import "golang.org/x/sys/unix"

// setKeepAlivePeriod fails with ENOPROTOOPT: OpenBSD has no per-socket
// keep-alive timing (only the system-wide sysctls), and Go's net reports
// the same error there.
func setKeepAlivePeriod(fd, secs int) error {
	return unix.ENOPROTOOPT
}
