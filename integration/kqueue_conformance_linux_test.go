//go:build linux

package integration_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/kqueue"
	"github.com/weftrt/weft/runtime/rt"
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

func emulatedKqueue(b *rt.Builder) { b.Driver("kqueue-emulated") }

func TestEmulatedKqueuePassesTheDriverSuiteOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, onCurrentThread(emulatedKqueue))
}

// Two workers share the driver: operations run on one worker while the
// other parks in kevent, the layout that exposes races between Park, the
// deferred registrations and the operations' readiness protocol.
func TestEmulatedKqueuePassesTheDriverSuiteOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, onWorkStealing(emulatedKqueue))
}

// The pipe that replaces EVFILT_USER on netbsd and openbsd, on the
// layout where Unpark matters most (a worker waking another).
func TestEmulatedKqueueWithThePipeForUnparkPassesTheDriverSuiteOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, onWorkStealing(func(b *rt.Builder) { b.Driver("kqueue-emulated-pipe") }))
}

func TestOnLinuxARuntimeWithTheKqueueDriverFailsToBuild(t *testing.T) {
	_, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver("kqueue").Build()
	if err == nil {
		t.Fatal("building the kqueue driver on Linux succeeded")
	}
	t.Log(err)
}
