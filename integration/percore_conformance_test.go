package integration_test

import (
	"fmt"
	"testing"

	"github.com/weftrt/weft/conformance"
	_ "github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/percore"
	_ "github.com/weftrt/weft/timers/wheel"
)

// TestPercoreRunsTheDriverSuiteOnEpoll runs the driver suite with drivers/epoll: every
// worker creates its own epoll instance, so operations on sockets of one
// worker's driver run on others after a steal or a cross-worker wake.
func TestPercoreRunsTheDriverSuiteOnEpoll(t *testing.T) {
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.Driver(t, func(b *rt.Builder) {
				b.Scheduler(percore.Name).Workers(n).Driver("epoll").Timer("wheel")
			})
		})
	}
}

// TestPercoreRunsTheTimingSuite runs the time API's end-to-end suite
// (virtual, auto-advancing clock): the clock moves only when the whole
// pool is idle.
func TestPercoreRunsTheTimingSuite(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.TimingRuntime(t, func(b *rt.Builder) {
				b.Timer("wheel").Scheduler(percore.Name).Workers(n)
			})
		})
	}
}
