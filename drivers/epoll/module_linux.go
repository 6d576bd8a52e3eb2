//go:build linux

package epoll

import "github.com/weftrt/weft/core"

// available is the module's Available: nil, epoll is always there.
var available func() error

func newDriver(events int) (core.Driver, error) {
	d, err := New(events)
	if err != nil {
		return nil, err
	}
	return d, nil
}
