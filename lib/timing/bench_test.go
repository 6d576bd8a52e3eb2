package timing_test

import (
	"runtime"
	"sync"
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/lib/timing"
)

// sink keeps the benchmark's allocations live to the end.
var sink *timing.SleepFuture

// BenchmarkSleepAllocationOnly is the allocation floor under W7b
// (timers_churn) through the user API: it creates the sleeps W7b creates,
// one per operation, with the same window of conformance.TimerChurnWindow
// live per goroutine on GOMAXPROCS goroutines, but never polls or drops
// them. Plain Go's side of W7b (time.AfterFunc) allocates an object of the
// same size class per operation, so this cost is on both sides of the
// ratio; what W7b's weft figure adds to it is the timer work.
func BenchmarkSleepAllocationOnly(b *testing.B) {
	p := runtime.GOMAXPROCS(0)
	b.ReportAllocs()
	b.ResetTimer()
	var wg sync.WaitGroup
	last := make([]*timing.SleepFuture, p)
	for g := range p {
		n := b.N / p
		if g < b.N%p {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			window := make([]*timing.SleepFuture, conformance.TimerChurnWindow)
			for i := range n {
				window[i%len(window)] = timing.Sleep(conformance.TimerChurnDuration(i))
			}
			last[g] = window[0]
		}()
	}
	wg.Wait()
	sink = last[0]
}
