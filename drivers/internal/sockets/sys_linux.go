//go:build linux

package sockets

import (
	"net"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// sysSocket creates a non-blocking, close-on-exec socket in one call.
func sysSocket(family, sotype int) (int, error) {
	return unix.Socket(family, sotype|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
}

// joinIPv4 joins an IPv4 group with struct ip_mreqn, which names the
// interface by its index.
func joinIPv4(fd int, group net.IP, _ string, ifindex int) error {
	mreq := &unix.IPMreqn{Ifindex: int32(ifindex)}
	copy(mreq.Multiaddr[:], group)
	return os.NewSyscallError("setsockopt", unix.SetsockoptIPMreqn(fd, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq))
}

// ListenBacklog is the kernel's cap on listen queues, which Go's net also
// uses as its backlog: net.core.somaxconn, or SOMAXCONN if it cannot be
// read.
func ListenBacklog() int {
	b, err := os.ReadFile("/proc/sys/net/core/somaxconn")
	if err != nil {
		return unix.SOMAXCONN
	}
	n := 0
	for _, c := range strings.TrimSpace(string(b)) {
		if c < '0' || c > '9' {
			return unix.SOMAXCONN
		}
		n = n*10 + int(c-'0')
	}
	if n <= 0 {
		return unix.SOMAXCONN
	}
	return min(n, 1<<16-1)
}
