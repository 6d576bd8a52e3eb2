package integration_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/runtime/rt"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/timers/wheel"
)

// W7a timers_sleep on a runtime: wall time of 100,000 tasks each awaiting
// a sleep of 1-100 ms (ideal 100 ms). The wheel alone and plain Go run
// beside it in timers/wheel (BenchmarkW7aSleep).
func BenchmarkWheelW7aSleepOnARuntime(b *testing.B) {
	b.Run("weft=wheel/on=currentthread", func(b *testing.B) {
		conformance.TimerSleepRuntime(b, func(bl *rt.Builder) { bl.Timer("wheel").Scheduler("currentthread") })
	})
}
