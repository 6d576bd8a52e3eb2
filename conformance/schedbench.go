package conformance

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// This file holds the scheduler workloads of BENCHMARKS.md (W1, W2, W3, W5)
// and a spawn-and-join variant, each as a benchmark with a "weft" and a
// "go" sub-benchmark, so that a scheduler module shows both in one
// `go test -bench .` run:
//
//	func BenchmarkSpawnLocal(b *testing.B) { conformance.BenchSpawnLocal(b, configure) }
//
// configure selects the scheduler (and its workers) on a builder that
// ignores the environment. Every op is one whole workload (200,000 tasks,
// 200x1,000 yields, ...); the figure to compare is the ns/task, ns/yield or
// ns/spawn metric.

const (
	benchSpawnTasks     = 200_000 // W1, W2
	benchYieldTasks     = 200     // W3
	benchYieldsPerTask  = 1_000   // W3
	benchChainDepth     = 100_000 // W5
	benchSpawnJoinTasks = 10_000
)

// schedBenchRuntime builds the runtime a scheduler benchmark runs on,
// closed when the benchmark ends.
func schedBenchRuntime(b *testing.B, configure func(*rt.Builder)) *rt.Runtime {
	b.Helper()
	bld := rt.NewBuilder().IgnoreEnv()
	configure(bld)
	r, err := bld.Build()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.Close() })
	return r
}

// per reports the benchmark's time divided by n units of work per op.
func perUnit(b *testing.B, n int, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), unit)
}

// benchCountdown is the shared end of a workload: tasks count down, and the
// one that reaches zero wakes the waiter.
type benchCountdown struct {
	left  atomic.Int64
	waker core.AtomicWaker
}

func (c *benchCountdown) reset(n int) { c.left.Store(int64(n)) }

func (c *benchCountdown) done() {
	if c.left.Add(-1) == 0 {
		c.waker.Wake()
	}
}

// Poll is ready once the count reached zero.
func (c *benchCountdown) Poll(cx *core.Context) (core.Unit, bool) {
	if c.left.Load() == 0 {
		return core.Unit{}, true
	}
	c.waker.Register(cx.Waker())
	return core.Unit{}, c.left.Load() == 0
}

// tick is a task that counts down once.
type benchTick struct{ c *benchCountdown }

func (t benchTick) Poll(*core.Context) (core.Unit, bool) { t.c.done(); return core.Unit{}, true }

// benchSpawnMany is W1's root: spawn n ticks from inside the task, then wait
// for the last.
type benchSpawnMany struct {
	n       int
	c       *benchCountdown
	spawned bool
}

func (s *benchSpawnMany) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.spawned {
		s.spawned = true
		for i := 0; i < s.n; i++ {
			core.Spawn(cx, core.Future[core.Unit](benchTick{s.c}))
		}
	}
	return s.c.Poll(cx)
}

// BenchSpawnLocal is W1 spawn_local: inside one task, spawn 200,000
// tasks; each counts down; the last signals done. Metric: ns/task.
func BenchSpawnLocal(b *testing.B, configure func(*rt.Builder)) {
	b.Run("weft", func(b *testing.B) {
		r := schedBenchRuntime(b, configure)
		c := &benchCountdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(benchSpawnTasks)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&benchSpawnMany{n: benchSpawnTasks, c: c})); err != nil {
				b.Fatal(err)
			}
		}
		perUnit(b, benchSpawnTasks, "ns/task")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var left atomic.Int64
			left.Store(benchSpawnTasks)
			done := make(chan struct{})
			// The spawner is a goroutine too, like weft's root task.
			go func() {
				for i := 0; i < benchSpawnTasks; i++ {
					go func() {
						if left.Add(-1) == 0 {
							close(done)
						}
					}()
				}
			}()
			<-done
		}
		perUnit(b, benchSpawnTasks, "ns/task")
	})
}

// BenchSpawnRemote is W2 spawn_remote: from a goroutine outside the
// runtime, spawn 200,000 tasks and wait for the last. Metric: ns/task.
func BenchSpawnRemote(b *testing.B, configure func(*rt.Builder)) {
	b.Run("weft", func(b *testing.B) {
		r := schedBenchRuntime(b, configure)
		h := r.Handle()
		c := &benchCountdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(benchSpawnTasks)
			for i := 0; i < benchSpawnTasks; i++ {
				rt.Spawn(h, core.Future[core.Unit](benchTick{c}))
			}
			if _, err := rt.BlockOn(r, core.Future[core.Unit](c)); err != nil {
				b.Fatal(err)
			}
		}
		perUnit(b, benchSpawnTasks, "ns/task")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(benchSpawnTasks)
			for i := 0; i < benchSpawnTasks; i++ {
				go wg.Done()
			}
			wg.Wait()
		}
		perUnit(b, benchSpawnTasks, "ns/task")
	})
}

// benchYielder yields left times (core.Yield, as a user's task would), then
// counts down.
type benchYielder struct {
	left int
	y    core.Future[core.Unit]
	c    *benchCountdown
}

func (f *benchYielder) Poll(cx *core.Context) (core.Unit, bool) {
	for {
		if f.y != nil {
			if _, ok := f.y.Poll(cx); !ok {
				return core.Unit{}, false
			}
			f.y = nil
		}
		if f.left == 0 {
			f.c.done()
			return core.Unit{}, true
		}
		f.left--
		f.y = core.Yield()
	}
}

// benchSpawnYielders is W3's root.
type benchSpawnYielders struct {
	c       *benchCountdown
	spawned bool
}

func (s *benchSpawnYielders) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.spawned {
		s.spawned = true
		for i := 0; i < benchYieldTasks; i++ {
			core.Spawn(cx, core.Future[core.Unit](&benchYielder{left: benchYieldsPerTask, c: s.c}))
		}
	}
	return s.c.Poll(cx)
}

// BenchYieldMany is W3 yield_many: 200 tasks each yield 1,000 times.
// Metric: ns/yield. The Go side is 200 goroutines calling
// runtime.Gosched.
func BenchYieldMany(b *testing.B, configure func(*rt.Builder)) {
	const yields = benchYieldTasks * benchYieldsPerTask
	b.Run("weft", func(b *testing.B) {
		r := schedBenchRuntime(b, configure)
		c := &benchCountdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(benchYieldTasks)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&benchSpawnYielders{c: c})); err != nil {
				b.Fatal(err)
			}
		}
		perUnit(b, yields, "ns/yield")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(benchYieldTasks)
			for i := 0; i < benchYieldTasks; i++ {
				go func() {
					defer wg.Done()
					for j := 0; j < benchYieldsPerTask; j++ {
						runtime.Gosched()
					}
				}()
			}
			wg.Wait()
		}
		perUnit(b, yields, "ns/yield")
	})
}

// link is one task of W5's chain: it spawns the next, or signals done.
type benchLink struct {
	left int
	c    *benchCountdown
}

func (l benchLink) Poll(cx *core.Context) (core.Unit, bool) {
	if l.left == 0 {
		l.c.done()
	} else {
		core.Spawn(cx, core.Future[core.Unit](benchLink{left: l.left - 1, c: l.c}))
	}
	return core.Unit{}, true
}

// benchChainRoot starts the chain and waits for its end.
type benchChainRoot struct {
	c       *benchCountdown
	started bool
}

func (s *benchChainRoot) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.started {
		s.started = true
		core.Spawn(cx, core.Future[core.Unit](benchLink{left: benchChainDepth - 1, c: s.c}))
	}
	return s.c.Poll(cx)
}

// BenchChainedSpawn is W5 chained_spawn: each task spawns the next,
// 100,000 deep; the last signals done. Metric: ns/spawn.
func BenchChainedSpawn(b *testing.B, configure func(*rt.Builder)) {
	b.Run("weft", func(b *testing.B) {
		r := schedBenchRuntime(b, configure)
		c := &benchCountdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(1)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&benchChainRoot{c: c})); err != nil {
				b.Fatal(err)
			}
		}
		perUnit(b, benchChainDepth, "ns/spawn")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			done := make(chan struct{})
			var next func(left int)
			next = func(left int) {
				if left == 0 {
					close(done)
					return
				}
				go next(left - 1)
			}
			go next(benchChainDepth - 1)
			<-done
		}
		perUnit(b, benchChainDepth, "ns/spawn")
	})
}

// benchSpawnJoin spawns n tasks from inside a task and awaits every handle.
type benchSpawnJoin struct {
	n    int
	c    *benchCountdown
	hs   []*core.JoinHandle[core.Unit]
	next int
}

func (s *benchSpawnJoin) Poll(cx *core.Context) (core.Unit, bool) {
	if s.hs == nil {
		s.hs = make([]*core.JoinHandle[core.Unit], s.n)
		for i := range s.hs {
			s.hs[i] = core.Spawn(cx, core.Future[core.Unit](benchTick{s.c}))
		}
	}
	for ; s.next < len(s.hs); s.next++ {
		if _, ok := s.hs[s.next].Poll(cx); !ok {
			return core.Unit{}, false
		}
	}
	return core.Unit{}, true
}

// BenchmarkSpawnJoin spawns 10,000 tasks from inside a task and awaits
// each one's JoinHandle. Metric: ns/task. The Go side starts goroutines
// and waits on a WaitGroup.
func BenchSpawnJoin(b *testing.B, configure func(*rt.Builder)) {
	b.Run("weft", func(b *testing.B) {
		r := schedBenchRuntime(b, configure)
		c := &benchCountdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(benchSpawnJoinTasks)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&benchSpawnJoin{n: benchSpawnJoinTasks, c: c})); err != nil {
				b.Fatal(err)
			}
		}
		perUnit(b, benchSpawnJoinTasks, "ns/task")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(benchSpawnJoinTasks)
			go func() {
				for i := 0; i < benchSpawnJoinTasks; i++ {
					go wg.Done()
				}
			}()
			wg.Wait()
		}
		perUnit(b, benchSpawnJoinTasks, "ns/task")
	})
}
