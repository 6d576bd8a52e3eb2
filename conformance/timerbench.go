package conformance

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/runtime/rt"
)

// The timer workloads of BENCHMARKS.md, shared by the timer modules so that
// each runs exactly the same code against its own Timer, next to plain Go
// in the same run.
//
//	W7a timers_sleep: 100,000 sleepers, sleeper i sleeps 1 + (i*7919 mod 100) ms;
//	                  wall time per round (ideal 100 ms).
//	W7b timers_churn: arm a timer of 1-2 s and cancel it before it fires;
//	                  ns per arm+cancel.
//
// Churn keeps a window of TimerChurnWindow timers armed, as a server with
// that many requests in flight would: each operation cancels the timer armed
// TimerChurnWindow operations earlier and arms a new one. The churn
// functions split b.N operations evenly over GOMAXPROCS goroutines (use
// -cpu to vary it), each with its own window, so -benchtime=1000000x runs
// exactly the spec's million operations. They do not use b.RunParallel,
// whose shared operation counter is bumped once per operation when the
// iteration count is fixed and would dominate a 50 ns operation.

const (
	// TimerSleepers is W7a's number of sleepers.
	TimerSleepers = 100_000
	// TimerChurnWindow is how many timers W7b keeps armed.
	TimerChurnWindow = 1024
)

// TimerSleepDuration is W7a's sleep of sleeper i: 1 + (i*7919 mod 100) ms.
func TimerSleepDuration(i int) time.Duration {
	return time.Duration(1+(i*7919)%100) * time.Millisecond
}

// TimerChurnDuration is W7b's timeout of operation i: 1 s + (i*7919 mod
// 1000) ms.
func TimerChurnDuration(i int) time.Duration {
	return time.Second + time.Duration((i*7919)%1000)*time.Millisecond
}

// TimerChurn is W7b on the Timer SPI: each operation reads the real clock,
// arms a caller-owned entry (reused, as a reset sleep reuses its entry) and
// cancels the one armed a window earlier. Each goroutine has its own
// window.
func TimerChurn(b *testing.B, f TimerFactory) {
	clock := core.NewRealClock()
	tm := f(clock)
	b.ReportAllocs()
	b.ResetTimer()
	timerParallel(b, func(n int) {
		es := make([]core.TimerEntry, TimerChurnWindow)
		i := 0
		for range n {
			e := &es[i%TimerChurnWindow]
			tm.Cancel(e)
			e.Deadline = clock.Now().Add(TimerChurnDuration(i))
			tm.Insert(e)
			i++
		}
		for k := range es {
			tm.Cancel(&es[k])
		}
	})
}

// TimerChurnSleep is W7b through the user API: each operation creates a
// timing.Sleep of 1-2 s, polls it once (which reads the clock, registers
// the waker and arms the entry) and drops the sleep created a window
// earlier (which cancels its entry).
func TimerChurnSleep(b *testing.B, f TimerFactory) {
	tm := &core.Time{Clock: core.NewRealClock()}
	tm.Timer = f(tm.Clock)
	b.ReportAllocs()
	b.ResetTimer()
	timerParallel(b, func(n int) {
		wcx := spi.NewWorkerContext(&timerBenchWorker{time: tm})
		cx := wcx.Context().WithWaker(core.NoopWaker)
		ss := make([]*timing.SleepFuture, TimerChurnWindow)
		i := 0
		for range n {
			k := i % TimerChurnWindow
			if ss[k] != nil {
				ss[k].Drop()
			}
			s := timing.Sleep(TimerChurnDuration(i))
			wcx.ResetBudget()
			s.Poll(&cx)
			ss[k] = s
			i++
		}
		for _, s := range ss {
			if s != nil {
				s.Drop()
			}
		}
	})
}

// GoTimerChurnAfterFunc is W7b in plain Go: time.AfterFunc and Stop.
func GoTimerChurnAfterFunc(b *testing.B) {
	fire := func() {}
	b.ReportAllocs()
	b.ResetTimer()
	timerParallel(b, func(n int) {
		ts := make([]*time.Timer, TimerChurnWindow)
		i := 0
		for range n {
			k := i % TimerChurnWindow
			if ts[k] != nil {
				ts[k].Stop()
			}
			ts[k] = time.AfterFunc(TimerChurnDuration(i), fire)
			i++
		}
		for _, t := range ts {
			if t != nil {
				t.Stop()
			}
		}
	})
}

// GoTimerChurnNewTimer is W7b in plain Go: time.NewTimer and Stop.
func GoTimerChurnNewTimer(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	timerParallel(b, func(n int) {
		ts := make([]*time.Timer, TimerChurnWindow)
		i := 0
		for range n {
			k := i % TimerChurnWindow
			if ts[k] != nil {
				ts[k].Stop()
			}
			ts[k] = time.NewTimer(TimerChurnDuration(i))
			i++
		}
		for _, t := range ts {
			if t != nil {
				t.Stop()
			}
		}
	})
}

// GoTimerChurnReset is W7b in plain Go with reused timers: Stop and Reset,
// the allocation-free pattern, the counterpart of TimerChurn.
func GoTimerChurnReset(b *testing.B) {
	b.ReportAllocs()
	b.ResetTimer()
	timerParallel(b, func(n int) {
		ts := make([]*time.Timer, TimerChurnWindow)
		for k := range ts {
			ts[k] = time.NewTimer(time.Hour)
			ts[k].Stop()
		}
		i := 0
		for range n {
			t := ts[i%TimerChurnWindow]
			t.Stop()
			t.Reset(TimerChurnDuration(i))
			i++
		}
		for _, t := range ts {
			t.Stop()
		}
	})
}

// timerParallel runs body on GOMAXPROCS goroutines, giving each its share of
// b.N operations, and waits for them. The timer runs across the whole call.
func timerParallel(b *testing.B, body func(n int)) {
	p := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for g := range p {
		n := b.N / p
		if g < b.N%p {
			n++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(n)
		}()
	}
	wg.Wait()
}

// timerBenchWorker is a core.Worker carrying only a Time, for driving the
// timing API without a scheduler.
type timerBenchWorker struct{ time *core.Time }

// Scheduler, Defer, Driver and Time implement core.Worker.
func (w *timerBenchWorker) Scheduler() core.Scheduler { return nil }
func (w *timerBenchWorker) Defer(x core.Waker)        { x.Wake() }
func (w *timerBenchWorker) Driver() core.Driver       { return nil }
func (w *timerBenchWorker) Time() *core.Time          { return w.time }

// timerBenchWaker counts down a sleeper group and closes done at zero.
type timerBenchWaker struct {
	left *atomic.Int64
	done chan struct{}
}

// Wake counts one sleeper down.
func (w *timerBenchWaker) Wake() {
	if w.left.Add(-1) == 0 {
		close(w.done)
	}
}

// TimerSleepAlone is W7a on the timer alone, on the real clock: arm
// TimerSleepers entries, then do what a scheduler with nothing else to do
// does (sleep until NextDeadline, Fire) until every entry has fired. One
// op is one round; its time is the workload's wall time.
func TimerSleepAlone(b *testing.B, f TimerFactory) {
	clock := core.NewRealClock()
	tm := &core.Time{Clock: clock, Timer: f(clock)}
	es := make([]core.TimerEntry, TimerSleepers)
	b.ResetTimer()
	for range b.N {
		var left atomic.Int64
		left.Store(TimerSleepers)
		done := make(chan struct{})
		w := &timerBenchWaker{left: &left, done: done}
		for i := range es {
			es[i].Waker.Register(w)
			es[i].Deadline = clock.Now().Add(TimerSleepDuration(i))
			tm.Timer.Insert(&es[i])
		}
		for left.Load() > 0 {
			if d := spi.ParkTimeout(tm, time.Second); d > 0 {
				time.Sleep(d)
			}
			spi.Fire(tm)
		}
		<-done
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/round")
}

// TimerSleepRuntime is W7a on a runtime with the real clock: a root task
// spawns TimerSleepers tasks that each await a timing.Sleep, then joins
// them. configure selects the timer and scheduler. One op is one round.
func TimerSleepRuntime(b *testing.B, configure func(*rt.Builder)) {
	bl := rt.NewBuilder().IgnoreEnv().Clock("real")
	configure(bl)
	r, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	defer r.ShutdownBackground()
	b.ResetTimer()
	for range b.N {
		fs := make([]core.Future[core.Unit], TimerSleepers)
		for i := range fs {
			fs[i] = timing.Sleep(TimerSleepDuration(i))
		}
		if _, err := rt.BlockOn(r, timerSpawnAll(fs)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/round")
}

// GoTimerSleepGoroutines is W7a in plain Go: one goroutine per sleeper,
// time.Sleep, and a WaitGroup.
func GoTimerSleepGoroutines(b *testing.B) {
	for range b.N {
		var wg sync.WaitGroup
		wg.Add(TimerSleepers)
		for i := range TimerSleepers {
			go func() {
				defer wg.Done()
				time.Sleep(TimerSleepDuration(i))
			}()
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/round")
}

// GoTimerSleepAfterFunc is W7a in plain Go without goroutines: one
// time.AfterFunc per sleeper counting down a WaitGroup, the counterpart of
// TimerSleepAlone.
func GoTimerSleepAfterFunc(b *testing.B) {
	for range b.N {
		var wg sync.WaitGroup
		wg.Add(TimerSleepers)
		for i := range TimerSleepers {
			time.AfterFunc(TimerSleepDuration(i), wg.Done)
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/round")
}

// TimerMemory is what arming n timers costs, in bytes per timer, measured
// with runtime.ReadMemStats after a collection.
type TimerMemory struct {
	// Entry is the caller-owned core.TimerEntry.
	Entry float64
	// Timer is what the timer itself holds per armed entry.
	Timer float64
	// Sleep is a whole armed timing.Sleep future (entry included) plus the
	// timer's share.
	Sleep float64
}

// MeasureTimerMemory arms n entries (the acceptance figure uses 1,000,000)
// in a timer built by f and reports the bytes per armed timer.
func MeasureTimerMemory(f TimerFactory, n int) TimerMemory {
	clock := core.NewVirtualClock()
	var m TimerMemory

	tm := f(clock)
	base := timerHeapBytes()
	es := make([]*core.TimerEntry, n)
	for i := range es {
		es[i] = &core.TimerEntry{Deadline: core.Instant(TimerChurnDuration(i))}
	}
	withEntries := timerHeapBytes()
	for _, e := range es {
		tm.Insert(e)
	}
	armed := timerHeapBytes()
	// The slice of pointers is the benchmark's, not the entries'.
	m.Entry = (withEntries - base - float64(8*n)) / float64(n)
	m.Timer = (armed - withEntries) / float64(n)
	runtime.KeepAlive(es)
	runtime.KeepAlive(tm)
	es = nil

	t := &core.Time{Clock: clock, Timer: f(clock)}
	wcx := spi.NewWorkerContext(&timerBenchWorker{time: t})
	cx := wcx.Context().WithWaker(core.NoopWaker)
	base = timerHeapBytes()
	ss := make([]*timing.SleepFuture, n)
	for i := range ss {
		ss[i] = timing.Sleep(TimerChurnDuration(i))
		wcx.ResetBudget()
		ss[i].Poll(&cx)
	}
	m.Sleep = (timerHeapBytes() - base - float64(8*n)) / float64(n)
	runtime.KeepAlive(ss)
	return m
}

// MeasureGoTimerMemory arms n time.AfterFunc timers and reports the bytes
// per armed timer, for comparison.
func MeasureGoTimerMemory(n int) float64 {
	fire := func() {}
	base := timerHeapBytes()
	ts := make([]*time.Timer, n)
	for i := range ts {
		ts[i] = time.AfterFunc(time.Hour+TimerChurnDuration(i), fire)
	}
	per := (timerHeapBytes() - base - float64(8*n)) / float64(n)
	for _, t := range ts {
		t.Stop()
	}
	return per
}

// timerHeapBytes returns the live heap after a collection.
func timerHeapBytes() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc)
}
