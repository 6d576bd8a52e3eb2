//go:build darwin || freebsd || netbsd || openbsd

package kqueue

import "github.com/weftrt/weft/core"

func newDriverModule(events int) (core.Driver, error) {
	d, err := New(events)
	if err != nil {
		return nil, err
	}
	return d, nil
}
