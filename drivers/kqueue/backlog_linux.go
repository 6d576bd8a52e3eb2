//go:build linux

package kqueue

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// listenBacklog is the kernel's cap on listen queues, which Go's net also
// uses as its backlog.
func listenBacklog() int {
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
