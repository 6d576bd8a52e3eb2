//go:build darwin || freebsd || netbsd || openbsd

package kqueue

import "github.com/weftrt/weft/core"

// available is the module's Available: nil, kqueue is always there.
var available func() error

func newDriverModule(events int) (core.Driver, error) {
	d, err := New(events)
	if err != nil {
		return nil, err
	}
	return d, nil
}
