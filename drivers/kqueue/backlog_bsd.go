//go:build darwin || freebsd || netbsd || openbsd

package kqueue

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// listenBacklog is the kernel's cap on listen queues, read from the sysctl
// Go's net reads on each system, or SOMAXCONN.
func listenBacklog() int {
	var name string
	switch runtime.GOOS {
	case "darwin":
		name = "kern.ipc.somaxconn"
	case "freebsd":
		name = "kern.ipc.soacceptqueue"
	case "openbsd":
		name = "kern.somaxconn"
	default:
		return unix.SOMAXCONN
	}
	n, err := unix.SysctlUint32(name)
	if err != nil || n == 0 {
		return unix.SOMAXCONN
	}
	return int(min(n, 1<<16-1))
}
