package bench

import (
	"runtime"
	"sync"
	"time"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/runtime/rt"
)

// The timer workloads. Their definitions (sizes, durations, the churn
// window) are the timer conformance kit's, so these figures and the timer
// modules' own benchmarks measure the same thing:
//
//	W7a timers_sleep  n tasks, task i sleeps conformance.TimerSleepDuration(i)
//	                  (1 + (i*7919 mod 100) ms); wall time, ideal 100 ms.
//	W7b timers_churn  n times arm a timer of conformance.TimerChurnDuration(i)
//	                  (1-2 s) and cancel it before it fires, keeping a window
//	                  of conformance.TimerChurnWindow armed, split over
//	                  GOMAXPROCS tasks (goroutines for plain Go); ns per
//	                  arm+cancel.
const timerSleepers = conformance.TimerSleepers

// timersSleepIdeal is W7a's ideal wall time at size n in ms: the longest
// sleep.
func timersSleepIdeal(n int) float64 {
	var longest time.Duration
	for i := range n {
		longest = max(longest, conformance.TimerSleepDuration(i))
	}
	return ms(longest)
}

// sleeper is a task of W7a: it awaits its sleep, then signals done.
type sleeper struct {
	s *timing.SleepFuture
	c *counter
}

func (t sleeper) Poll(cx *core.Context) (core.Unit, bool) {
	if _, ok := t.s.Poll(cx); !ok {
		return core.Unit{}, false
	}
	t.c.add(cx)
	return core.Unit{}, true
}

func weftTimersSleep(r *rt.Runtime, n int) (float64, error) {
	c := newCounter(n)
	start := time.Now()
	fs := make([]core.Future[core.Unit], n)
	for i := range fs {
		fs[i] = sleeper{s: timing.Sleep(conformance.TimerSleepDuration(i)), c: c}
	}
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnAll{fs: fs, c: c}))
	return ms(time.Since(start)), err
}

func goTimersSleep(n int) (float64, error) {
	c := newGoCounter(n)
	start := time.Now()
	for i := range n {
		go func() {
			time.Sleep(conformance.TimerSleepDuration(i))
			c.add()
		}()
	}
	<-c.done
	return ms(time.Since(start)), nil
}

// churner is a task of W7b. Each operation drops the sleep armed a window
// earlier (which cancels its timer entry), creates a sleep and polls it
// once (which arms its entry). Sleep polls consume the task's budget; when
// it is spent the task yields, as any task doing a long run of timer work
// does.
type churner struct {
	ops, done int
	window    []*timing.SleepFuture
	y         core.Future[core.Unit]
	c         *counter
}

func (t *churner) Poll(cx *core.Context) (core.Unit, bool) {
	for {
		if t.y != nil {
			if _, ok := t.y.Poll(cx); !ok {
				return core.Unit{}, false
			}
			t.y = nil
		}
		if t.done == t.ops {
			for _, s := range t.window {
				if s != nil {
					s.Drop()
				}
			}
			t.c.add(cx)
			return core.Unit{}, true
		}
		if cx.BudgetRemaining() == 0 {
			t.y = core.Yield()
			continue
		}
		k := t.done % len(t.window)
		if old := t.window[k]; old != nil {
			old.Drop()
		}
		s := timing.Sleep(conformance.TimerChurnDuration(t.done))
		s.Poll(cx)
		t.window[k] = s
		t.done++
	}
}

func weftTimersChurn(r *rt.Runtime, n int) (float64, error) {
	p := runtime.GOMAXPROCS(0)
	c := newCounter(p)
	start := time.Now()
	fs := make([]core.Future[core.Unit], p)
	for g := range fs {
		fs[g] = &churner{ops: share(n, p, g), window: make([]*timing.SleepFuture, conformance.TimerChurnWindow), c: c}
	}
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnAll{fs: fs, c: c}))
	return perOp(time.Since(start), n), err
}

// goTimersChurn is W7b with time.AfterFunc and Timer.Stop.
func goTimersChurn(n int) (float64, error) {
	p := runtime.GOMAXPROCS(0)
	fire := func() {}
	var wg sync.WaitGroup
	start := time.Now()
	for g := range p {
		wg.Add(1)
		go func() {
			defer wg.Done()
			window := make([]*time.Timer, conformance.TimerChurnWindow)
			for i := range share(n, p, g) {
				k := i % len(window)
				if window[k] != nil {
					window[k].Stop()
				}
				window[k] = time.AfterFunc(conformance.TimerChurnDuration(i), fire)
			}
			for _, t := range window {
				if t != nil {
					t.Stop()
				}
			}
		}()
	}
	wg.Wait()
	return perOp(time.Since(start), n), nil
}

// share is worker g's share of n operations split over p workers.
func share(n, p, g int) int {
	s := n / p
	if g < n%p {
		s++
	}
	return s
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
