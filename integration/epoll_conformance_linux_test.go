//go:build linux

package integration_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	_ "github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/runtime/rt"
)

func epollDriver(b *rt.Builder) { b.Driver("epoll") }

func TestEpollPassesTheDriverSuiteOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, onCurrentThread(epollDriver))
}

// Two workers share the driver: operations run on one worker while the
// other parks in epoll_wait.
func TestEpollPassesTheDriverSuiteOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, onWorkStealing(epollDriver))
}

// Linked without the weft facade but with every implementation module,
// epoll is still the default driver on Linux (io_uring has no rank and
// kqueue is unavailable), workstealing ranks over currentthread and percore,
// and the wheel over the heap.
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
