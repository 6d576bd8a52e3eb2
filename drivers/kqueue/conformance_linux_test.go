//go:build linux

package kqueue_test

import (
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/conformance"
	"github.com/weftrt/weft/core/rt"
	"github.com/weftrt/weft/drivers/kqueue"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/wheel"
)

// On Linux the registered "kqueue" module refuses to build (there is no
// kqueue); these test-only modules build the driver over the emulation
// (package internal/kqemu), with EVFILT_USER for Unpark as on darwin and
// freebsd, or with the pipe as on netbsd and openbsd.
func init() {
	for name, user := range map[string]bool{"kqueue-emulated": true, "kqueue-emulated-pipe": false} {
		core.RegisterDriver(name, "the kqueue driver over a kqueue emulation (tests only)", nil,
			func(_ struct{}, p core.DriverParams) (core.Driver, error) { return kqueue.NewEmulated(p.Events, user) })
	}
}

func TestConformanceOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("currentthread").Driver("kqueue-emulated").Timer("wheel")
	})
}

// Two workers share the driver: operations run on one worker while the
// other parks in kevent, the layout that exposes races between Park, the
// deferred registrations and the operations' readiness protocol.
func TestConformanceOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("workstealing").Workers(2).Driver("kqueue-emulated").Timer("wheel")
	})
}

// The pipe that replaces EVFILT_USER on netbsd and openbsd, on the
// layout where Unpark matters most (a worker waking another).
func TestConformanceWithThePipeForUnparkOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("workstealing").Workers(2).Driver("kqueue-emulated-pipe").Timer("wheel")
	})
}

func TestOnLinuxTheKqueueModuleSaysItNeedsABSD(t *testing.T) {
	_, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver("kqueue").Build()
	if err == nil {
		t.Fatal("building the kqueue driver on Linux succeeded")
	}
	t.Log(err)
}
