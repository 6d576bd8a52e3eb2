//go:build darwin || freebsd || netbsd || openbsd || linux

package sockets

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// Target is the peer of a stream connection, resolved by ResolveConnect.
type Target struct {
	// Network is the network as the caller named it ("tcp4", "unix"...).
	Network string
	// Sockaddr is the peer's socket address.
	Sockaddr unix.Sockaddr
	// Family and Sotype are the socket's family and type.
	Family, Sotype int
	// Net is the network as Go's net names its addresses ("tcp", "unix",
	// "unixpacket").
	Net string
}

// ResolveConnect resolves the peer of a stream connection ("tcp*"
// host:port, or "unix"/"unixpacket" path). Host names other than
// "localhost" are looked up with Go's resolver, which may block. A
// datagram network fails with EPROTOTYPE, as connect(2) would.
func ResolveConnect(network, address string) (Target, error) {
	t := Target{Network: network}
	var err error
	if _, t.Sockaddr, err = Resolve(network, address, false); err != nil {
		return t, err
	}
	if t.Family, t.Sotype, t.Net, err = Family(network, t.Sockaddr); err != nil {
		return t, err
	}
	if t.Sotype == unix.SOCK_DGRAM {
		return t, &os.SyscallError{Syscall: "connect", Err: unix.EPROTOTYPE}
	}
	return t, nil
}

// Socket creates the non-blocking socket to connect to t, with opts.
func (t Target) Socket(opts core.SocketOptions) (int, error) {
	return Socket(t.Network, t.Family, t.Sotype, opts)
}

// StartConnect starts a non-blocking connect of fd to t (retrying after
// EINTR). It reports true if the connection completed at once and false
// if it is in progress: the socket turns writable when it completes, and
// ConnectResult reads the outcome then. On error the caller still owns fd.
func (t Target) StartConnect(fd int) (bool, error) {
	var err error
	for {
		err = unix.Connect(fd, t.Sockaddr)
		if err != unix.EINTR {
			break
		}
	}
	switch err {
	case nil:
		return true, nil
	case unix.EINPROGRESS, unix.EALREADY:
		return false, nil
	}
	return false, os.NewSyscallError("connect", err)
}

// ConnectResult reads the outcome of a connect in progress on fd, as Go's
// net does: (true, nil) when connected, (false, nil) when it is still in
// progress (a spurious writability), or the error the connect failed with.
func ConnectResult(fd int) (bool, error) {
	soerr, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	if err != nil {
		return false, os.NewSyscallError("getsockopt", err)
	}
	switch e := unix.Errno(soerr); e {
	case 0:
	case unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
		return false, nil
	default:
		return false, os.NewSyscallError("connect", e)
	}
	// SO_ERROR is clear; make sure the socket is really connected.
	if _, err := unix.Getpeername(fd); err != nil {
		if err == unix.ENOTCONN {
			return false, nil
		}
		return false, os.NewSyscallError("getpeername", err)
	}
	return true, nil
}
