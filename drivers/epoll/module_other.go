//go:build !linux

package epoll

import (
	"fmt"
	"runtime"

	"github.com/weftrt/weft/core"
)

// available is the module's Available: there is no epoll here.
func available() error {
	return fmt.Errorf("%w; this is %s", ErrUnsupported, runtime.GOOS)
}

// newDriver fails everywhere but Linux, with an error that says so; the
// module is still registered, so a configuration naming "epoll" gets this
// error rather than "unknown driver".
func newDriver(int) (core.Driver, error) {
	return nil, fmt.Errorf("%w; this is %s (choose another driver.kind)", ErrUnsupported, runtime.GOOS)
}
