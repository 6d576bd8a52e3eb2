//go:build linux

package epoll_test

import (
	"testing"

	"github.com/weftrt/weft/core/conformance"
	"github.com/weftrt/weft/core/rt"
	_ "github.com/weftrt/weft/drivers/epoll"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/wheel"
)

func TestConformanceOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("currentthread").Driver("epoll").Timer("wheel")
	})
}

// Two workers share the driver: operations run on one worker while the
// other parks in epoll_wait, the layout that exposes races between Park and
// the operations' readiness protocol.
func TestConformanceOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("workstealing").Workers(2).Driver("epoll").Timer("wheel")
	})
}

func TestTheDriverSuiteChecksAtLeastTwentyBehaviours(t *testing.T) {
	if n := len(conformance.DriverBehaviours()); n < 20 {
		t.Fatalf("the driver suite has %d behaviours, want at least 20", n)
	}
}

// Linked without the weft facade, epoll is still the default driver on
// Linux, workstealing ranks over currentthread and the wheel is the timer.
func TestWithoutTheFacadeTheBuilderDefaultsToEpollWorkstealingAndTheWheel(t *testing.T) {
	comp, err := rt.NewBuilder().IgnoreEnv().Composition()
	if err != nil {
		t.Fatal(err)
	}
	got := [3]string{comp.Driver.Name, comp.Timer.Name, comp.Scheduler.Name}
	if got != [3]string{"epoll", "wheel", "workstealing"} {
		t.Fatalf("default driver, timer, scheduler: %q", got)
	}
}
