//go:build linux

package epoll

import "github.com/weftrt/weft/core"

func newDriver(events int) (core.Driver, error) {
	d, err := New(events)
	if err != nil {
		return nil, err
	}
	return d, nil
}
