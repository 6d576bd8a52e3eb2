//go:build linux

package iouring

import "github.com/weftrt/weft/core"

func newDriver(o Options) (core.Driver, error) {
	d, err := New(o)
	if err != nil {
		return nil, err
	}
	return d, nil
}
