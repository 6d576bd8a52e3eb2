package iouring

import (
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/weftrt/weft/core"
)

// ErrUnavailable is wrapped by the error of New (and Probe's Report.Err)
// when the kernel offers no usable io_uring. The error names the cause.
var ErrUnavailable = errors.New("iouring: io_uring is unavailable")

// errClosed is the error of an operation on a handle that was closed, or
// pending when it was: net.ErrClosed itself, as Go's net reports it.
var errClosed = net.ErrClosed

// errDriverClosed is the error of an operation pending when the driver
// closed, or issued after. It matches both core.ErrDriverClosed and
// net.ErrClosed under errors.Is.
var errDriverClosed = fmt.Errorf("%w: %w", core.ErrDriverClosed, net.ErrClosed)

// unavailable wraps a set-up failure in ErrUnavailable with a hint at its
// usual cause.
func unavailable(err error) error {
	var hint string
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOSYS:
			hint = "the kernel has no io_uring (older than 5.1, or built without CONFIG_IO_URING)"
		case syscall.EPERM:
			hint = "io_uring_setup was refused: kernel.io_uring_disabled forbids it, or a seccomp filter (a container runtime's default profile) blocks it"
		case syscall.EACCES:
			hint = "io_uring_setup was refused by a security module"
		case syscall.ENOMEM:
			hint = "the ring could not be allocated (on kernels before 5.12 it counts against RLIMIT_MEMLOCK)"
		case syscall.EINVAL:
			hint = "the kernel rejected the ring parameters or the probe (too old a kernel?)"
		}
	}
	if hint == "" {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, hint, err)
}
