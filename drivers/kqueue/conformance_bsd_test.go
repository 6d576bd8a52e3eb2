//go:build darwin || freebsd || netbsd || openbsd

package kqueue_test

import (
	"testing"

	"github.com/weftrt/weft/core/conformance"
	"github.com/weftrt/weft/core/rt"
	_ "github.com/weftrt/weft/drivers/kqueue"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/wheel"
)

// The driver conformance suite against the real kqueue. CI cross-compiles
// these tests (crossbuild.sh) but has no BSD or macOS machine to run them
// on; run them there with go test.

func TestConformanceOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("currentthread").Driver("kqueue").Timer("wheel")
	})
}

func TestConformanceOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("workstealing").Workers(2).Driver("kqueue").Timer("wheel")
	})
}
