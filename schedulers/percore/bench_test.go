package percore_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/conformance"
	"github.com/weftrt/weft/core/rt"
	"github.com/weftrt/weft/schedulers/percore"
)

// The benchmarks follow the workloads of BENCHMARKS.md (W1, W2, W3, W4,
// W5) and a spawn-and-join variant on the percore scheduler, each beside
// its plain-Go counterpart, so that one `go test -bench .` run shows both.
// Every op is one whole workload (200,000 tasks, 200x1,000 yields, ...);
// the figure to compare is the ns/task, ns/yield or ns/spawn metric. The
// weft runtime uses 2 workers, the development machines' GOMAXPROCS, with
// no driver (the scheduler's own costs; parking on a channel).
//
//	go test -run '^$' -bench . -count 5

const (
	benchWorkers   = 2
	spawnTasks     = 200_000 // W1, W2
	yieldTasks     = 200     // W3
	yieldsPerTask  = 1_000   // W3
	chainDepth     = 100_000 // W5
	spawnJoinTasks = 10_000
)

func benchRuntime(b *testing.B) *rt.Runtime {
	b.Helper()
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler(percore.Name).Workers(benchWorkers).Build()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.Close() })
	return r
}

// per reports the benchmark's time divided by n units of work per op.
func per(b *testing.B, n int, unit string) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), unit)
}

// countdown is the shared end of a workload: tasks count down, and the
// one that reaches zero wakes the waiter.
type countdown struct {
	left  atomic.Int64
	waker core.AtomicWaker
}

func (c *countdown) reset(n int) { c.left.Store(int64(n)) }

func (c *countdown) done() {
	if c.left.Add(-1) == 0 {
		c.waker.Wake()
	}
}

// Poll is ready once the count reached zero.
func (c *countdown) Poll(cx *core.Context) (core.Unit, bool) {
	if c.left.Load() == 0 {
		return core.Unit{}, true
	}
	c.waker.Register(cx.Waker())
	return core.Unit{}, c.left.Load() == 0
}

// tick is a task that counts down once.
type tick struct{ c *countdown }

func (t tick) Poll(*core.Context) (core.Unit, bool) { t.c.done(); return core.Unit{}, true }

// spawnMany is W1's root: spawn n ticks from inside the task, then wait
// for the last.
type spawnMany struct {
	n       int
	c       *countdown
	spawned bool
}

func (s *spawnMany) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.spawned {
		s.spawned = true
		for i := 0; i < s.n; i++ {
			core.Spawn(cx, core.Future[core.Unit](tick{s.c}))
		}
	}
	return s.c.Poll(cx)
}

// BenchmarkSpawnLocal is W1 spawn_local: inside one task, spawn 200,000
// tasks; each counts down; the last signals done. Metric: ns/task.
func BenchmarkSpawnLocal(b *testing.B) {
	b.Run("weft", func(b *testing.B) {
		r := benchRuntime(b)
		c := &countdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(spawnTasks)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&spawnMany{n: spawnTasks, c: c})); err != nil {
				b.Fatal(err)
			}
		}
		per(b, spawnTasks, "ns/task")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var left atomic.Int64
			left.Store(spawnTasks)
			done := make(chan struct{})
			// The spawner is a goroutine too, like weft's root task.
			go func() {
				for i := 0; i < spawnTasks; i++ {
					go func() {
						if left.Add(-1) == 0 {
							close(done)
						}
					}()
				}
			}()
			<-done
		}
		per(b, spawnTasks, "ns/task")
	})
}

// BenchmarkSpawnRemote is W2 spawn_remote: from a goroutine outside the
// runtime, spawn 200,000 tasks and wait for the last. Metric: ns/task.
func BenchmarkSpawnRemote(b *testing.B) {
	b.Run("weft", func(b *testing.B) {
		r := benchRuntime(b)
		h := r.Handle()
		c := &countdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(spawnTasks)
			for i := 0; i < spawnTasks; i++ {
				rt.Spawn(h, core.Future[core.Unit](tick{c}))
			}
			if _, err := rt.BlockOn(r, core.Future[core.Unit](c)); err != nil {
				b.Fatal(err)
			}
		}
		per(b, spawnTasks, "ns/task")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(spawnTasks)
			for i := 0; i < spawnTasks; i++ {
				go wg.Done()
			}
			wg.Wait()
		}
		per(b, spawnTasks, "ns/task")
	})
}

// yielder yields left times (core.Yield, as a user's task would), then
// counts down.
type yielder struct {
	left int
	y    core.Future[core.Unit]
	c    *countdown
}

func (f *yielder) Poll(cx *core.Context) (core.Unit, bool) {
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

// spawnYielders is W3's root.
type spawnYielders struct {
	c       *countdown
	spawned bool
}

func (s *spawnYielders) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.spawned {
		s.spawned = true
		for i := 0; i < yieldTasks; i++ {
			core.Spawn(cx, core.Future[core.Unit](&yielder{left: yieldsPerTask, c: s.c}))
		}
	}
	return s.c.Poll(cx)
}

// BenchmarkYieldMany is W3 yield_many: 200 tasks each yield 1,000 times.
// Metric: ns/yield. The Go side is 200 goroutines calling
// runtime.Gosched.
func BenchmarkYieldMany(b *testing.B) {
	const yields = yieldTasks * yieldsPerTask
	b.Run("weft", func(b *testing.B) {
		r := benchRuntime(b)
		c := &countdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(yieldTasks)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&spawnYielders{c: c})); err != nil {
				b.Fatal(err)
			}
		}
		per(b, yields, "ns/yield")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(yieldTasks)
			for i := 0; i < yieldTasks; i++ {
				go func() {
					defer wg.Done()
					for j := 0; j < yieldsPerTask; j++ {
						runtime.Gosched()
					}
				}()
			}
			wg.Wait()
		}
		per(b, yields, "ns/yield")
	})
}

// link is one task of W5's chain: it spawns the next, or signals done.
type link struct {
	left int
	c    *countdown
}

func (l link) Poll(cx *core.Context) (core.Unit, bool) {
	if l.left == 0 {
		l.c.done()
	} else {
		core.Spawn(cx, core.Future[core.Unit](link{left: l.left - 1, c: l.c}))
	}
	return core.Unit{}, true
}

// chainRoot starts the chain and waits for its end.
type chainRoot struct {
	c       *countdown
	started bool
}

func (s *chainRoot) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.started {
		s.started = true
		core.Spawn(cx, core.Future[core.Unit](link{left: chainDepth - 1, c: s.c}))
	}
	return s.c.Poll(cx)
}

// BenchmarkChainedSpawn is W5 chained_spawn: each task spawns the next,
// 100,000 deep; the last signals done. Metric: ns/spawn.
func BenchmarkChainedSpawn(b *testing.B) {
	b.Run("weft", func(b *testing.B) {
		r := benchRuntime(b)
		c := &countdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(1)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&chainRoot{c: c})); err != nil {
				b.Fatal(err)
			}
		}
		per(b, chainDepth, "ns/spawn")
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
			go next(chainDepth - 1)
			<-done
		}
		per(b, chainDepth, "ns/spawn")
	})
}

// spawnJoin spawns n tasks from inside a task and awaits every handle.
type spawnJoin struct {
	n    int
	c    *countdown
	hs   []*core.JoinHandle[core.Unit]
	next int
}

func (s *spawnJoin) Poll(cx *core.Context) (core.Unit, bool) {
	if s.hs == nil {
		s.hs = make([]*core.JoinHandle[core.Unit], s.n)
		for i := range s.hs {
			s.hs[i] = core.Spawn(cx, core.Future[core.Unit](tick{s.c}))
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
func BenchmarkSpawnJoin(b *testing.B) {
	b.Run("weft", func(b *testing.B) {
		r := benchRuntime(b)
		c := &countdown{}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			c.reset(spawnJoinTasks)
			if _, err := rt.BlockOn(r, core.Future[core.Unit](&spawnJoin{n: spawnJoinTasks, c: c})); err != nil {
				b.Fatal(err)
			}
		}
		per(b, spawnJoinTasks, "ns/task")
	})
	b.Run("go", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var wg sync.WaitGroup
			wg.Add(spawnJoinTasks)
			go func() {
				for i := 0; i < spawnJoinTasks; i++ {
					go wg.Done()
				}
			}()
			wg.Wait()
		}
		per(b, spawnJoinTasks, "ns/task")
	})
}

// BenchmarkPingPong is W4 ping_pong on 2 workers: ns per round trip
// through two bounded(1) channels. Compare BenchmarkGoPingPong.
func BenchmarkPingPong(b *testing.B) { conformance.ChannelPingPong(b, perCore(benchWorkers)) }

// BenchmarkGoPingPong is W4 in plain Go: goroutines and make(chan int, 1).
func BenchmarkGoPingPong(b *testing.B) { conformance.GoChannelPingPong(b) }
