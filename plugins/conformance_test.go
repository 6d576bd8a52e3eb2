package plugins_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	_ "github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/rt"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/wheel"
)

// The epoll driver, out of process: every behaviour of the driver suite
// builds a runtime whose driver is the example plugin binary.
func TestDriverConformanceOutOfProcessOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("currentthread").Timer("wheel").Driver("plugin").
			Set("driver.path", epollBin).Set("driver.sha256", epollSum)
	})
}

// Two workers share the plugin driver: completions dispatched by one
// worker's Park wake tasks another runs. Skipped with -short.
func TestDriverConformanceOutOfProcessOnAWorkStealingRuntime(t *testing.T) {
	if testing.Short() {
		t.Skip("the current-thread run covers the driver; -short skips the second scheduler")
	}
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("workstealing").Workers(2).Timer("wheel").Driver("plugin").
			Set("driver.path", epollBin).Set("driver.sha256", epollSum)
	})
}
