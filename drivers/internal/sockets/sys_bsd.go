//go:build darwin || freebsd || netbsd || openbsd

package sockets

import (
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// joinIPv4 joins an IPv4 group with struct ip_mreq, which names the
// interface by one of its IPv4 addresses (the BSDs have no ip_mreqn), as
// Go's net does.
func joinIPv4(fd int, group net.IP, iface string, _ int) error {
	mreq := &unix.IPMreq{}
	copy(mreq.Multiaddr[:], group)
	if iface != "" {
		a, err := interfaceIPv4(iface)
		if err != nil {
			return err
		}
		copy(mreq.Interface[:], a)
	}
	return os.NewSyscallError("setsockopt", unix.SetsockoptIPMreq(fd, unix.IPPROTO_IP, unix.IP_ADD_MEMBERSHIP, mreq))
}

// interfaceIPv4 returns the first IPv4 address of the named interface.
func interfaceIPv4(name string) (net.IP, error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return nil, err
	}
	addrs, err := ifi.Addrs()
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip4 := ipn.IP.To4(); ip4 != nil {
				return ip4, nil
			}
		}
	}
	return nil, &net.AddrError{Err: "interface has no IPv4 address", Addr: name}
}

// ListenBacklog is the kernel's cap on listen queues, read from the sysctl
// Go's net reads on each system, or SOMAXCONN.
func ListenBacklog() int {
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
