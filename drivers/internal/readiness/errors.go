//go:build darwin || freebsd || netbsd || openbsd || linux

package readiness

import (
	"fmt"
	"net"

	"github.com/weftrt/weft/core"
)

// ErrClosed is the error of an operation on a handle that was closed, or
// pending when it was: net.ErrClosed itself, as Go's net reports it.
var ErrClosed = net.ErrClosed

// ErrDriverClosed is the error of an operation pending when the driver
// closed, or issued after. It matches both core.ErrDriverClosed and
// net.ErrClosed under errors.Is.
var ErrDriverClosed = fmt.Errorf("%w: %w", core.ErrDriverClosed, net.ErrClosed)
