//go:build !linux

package iouring

import (
	"fmt"
	"runtime"

	"github.com/weftrt/weft/core"
)

// available is the module's Available: io_uring and its epoll fallback
// are both Linux interfaces.
func available() error {
	return fmt.Errorf("%w: io_uring and its epoll fallback are Linux interfaces; this is %s", ErrUnavailable, runtime.GOOS)
}

// newDriver fails everywhere but Linux; the module is still registered,
// so a configuration naming "iouring" gets this error (or the fallback)
// rather than "unknown driver".
func newDriver(Options) (core.Driver, error) {
	return nil, fmt.Errorf("%w: io_uring is a Linux interface; this is %s", ErrUnavailable, runtime.GOOS)
}

// Probe reports that io_uring does not exist on this system.
func Probe() (Report, error) {
	return Report{Kernel: runtime.GOOS, Disabled: -1, Err: fmt.Errorf("%w: this is %s", ErrUnavailable, runtime.GOOS)}, nil
}
