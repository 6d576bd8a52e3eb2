//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"testing"

	"github.com/weftrt/weft/drivers/internal/readiness"
)

func TestEOFAndErrorsMapToReadinessBits(t *testing.T) {
	for _, c := range []struct {
		filter, flags int
		fflags        uint32
		want          uint64
	}{
		{evfiltRead, 0, 0, readiness.Readable},
		{evfiltWrite, 0, 0, readiness.Writable},
		{evfiltRead, evEOF, 0, readiness.Readable | readiness.ReadClosed},
		{evfiltWrite, evEOF, 0, readiness.Writable | readiness.WriteClosed},
		{evfiltRead, evEOF, 54, readiness.Readable | readiness.ReadClosed | readiness.Errored | readiness.Writable},
		{evfiltWrite, evEOF, 61, readiness.Writable | readiness.WriteClosed | readiness.Errored | readiness.Readable},
	} {
		if got := readinessOf(c.filter, c.flags, c.fflags); got != c.want {
			t.Errorf("filter %d flags %#x fflags %d: %b, want %b", c.filter, c.flags, c.fflags, got, c.want)
		}
	}
}
