//go:build linux

package iouring

import "github.com/weftrt/weft/core"

// available is the module's Available: nil, as on Linux the fallback
// key, not the configuration check, handles a kernel without io_uring.
var available func() error

func newDriver(o Options) (core.Driver, error) {
	d, err := New(o)
	if err != nil {
		return nil, err
	}
	return d, nil
}
