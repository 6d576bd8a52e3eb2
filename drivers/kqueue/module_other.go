//go:build !darwin && !freebsd && !netbsd && !openbsd

package kqueue

import (
	"fmt"
	"runtime"

	"github.com/weftrt/weft/core"
)

// available is the module's Available: there is no kqueue here (the
// emulation the tests use is no production driver).
func available() error {
	return fmt.Errorf("%w; this is %s", ErrUnsupported, runtime.GOOS)
}

// newDriverModule fails everywhere but darwin and the BSDs, with an error
// that says so; the module is still registered, so a configuration naming
// "kqueue" gets this error rather than "unknown driver". (On Linux the
// driver's logic is compiled and tested against an emulation of kqueue,
// see NewEmulated, but that is no production driver.)
func newDriverModule(int) (core.Driver, error) {
	return nil, fmt.Errorf("%w; this is %s (choose another driver.kind)", ErrUnsupported, runtime.GOOS)
}
