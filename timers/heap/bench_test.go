package heap_test

import (
	"runtime"
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/timers/heap"
)

// newBenchTimer builds the timer the way a runtime with one worker per
// GOMAXPROCS would.
func newBenchTimer(c core.Clock) core.Timer {
	return heap.New(c, heap.ShardsFor(runtime.GOMAXPROCS(0)), heap.DefaultArity)
}

// W7b timers_churn: ns per arm+cancel of a 1-2 s timer, plain Go beside.
// Run with -benchtime=1000000x for the 1,000,000 operations of the spec.
func BenchmarkW7bChurn(b *testing.B) {
	b.Run("weft=heap/api=spi", func(b *testing.B) { conformance.TimerChurn(b, newBenchTimer) })
	b.Run("weft=heap/api=sleep", func(b *testing.B) { conformance.TimerChurnSleep(b, newBenchTimer) })
	b.Run("go/api=afterfunc", conformance.GoTimerChurnAfterFunc)
	b.Run("go/api=newtimer", conformance.GoTimerChurnNewTimer)
	b.Run("go/api=reset", conformance.GoTimerChurnReset)
}

// W7a timers_sleep: wall time of 100,000 sleepers of 1-100 ms (ideal
// 100 ms), plain Go beside. The same on a runtime is
// BenchmarkW7aSleepOnARuntime in the integration module.
func BenchmarkW7aSleep(b *testing.B) {
	b.Run("weft=heap/on=timer", func(b *testing.B) { conformance.TimerSleepAlone(b, newBenchTimer) })
	b.Run("go/on=goroutines", conformance.GoTimerSleepGoroutines)
	b.Run("go/on=afterfunc", conformance.GoTimerSleepAfterFunc)
}

// TestBytesPerArmedTimer reports the memory of 1,000,000 armed timers:
// the caller's entry, the timer's own share, a whole armed Sleep future,
// and a Go time.AfterFunc timer for comparison.
func TestBytesPerArmedTimer(t *testing.T) {
	if testing.Short() {
		t.Skip("arms a million timers")
	}
	const n = 1_000_000
	m := conformance.MeasureTimerMemory(newBenchTimer, n)
	g := conformance.MeasureGoTimerMemory(n)
	t.Logf("heap, %d armed timers: entry %.1f B + timer %.1f B per timer; armed timing.Sleep %.1f B; Go time.AfterFunc %.1f B",
		n, m.Entry, m.Timer, m.Sleep, g)
	if m.Entry+m.Timer > 256 || m.Sleep > 256 {
		t.Errorf("an armed timer costs more than 256 bytes: %+v", m)
	}
}
