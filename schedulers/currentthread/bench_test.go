package currentthread_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

func benchRuntime(b *testing.B) *rt.Runtime {
	b.Helper()
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Build()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = r.Close() })
	return r
}

// incr is the spawned task of the spawn benchmarks: it increments a counter.
type incr struct{ n *atomic.Int64 }

func (f incr) Poll(*core.Context) (core.Unit, bool) { f.n.Add(1); return core.Unit{}, true }

// spawnJoin is a root task that spawns n tasks and awaits every handle.
type spawnJoin struct {
	n       int
	counter atomic.Int64
	hs      []*core.JoinHandle[core.Unit]
	next    int
}

func (s *spawnJoin) Poll(cx *core.Context) (int64, bool) {
	if s.hs == nil {
		s.hs = make([]*core.JoinHandle[core.Unit], s.n)
		for i := range s.hs {
			s.hs[i] = core.Spawn(cx, core.Future[core.Unit](incr{&s.counter}))
		}
	}
	for ; s.next < len(s.hs); s.next++ {
		if _, ok := s.hs[s.next].Poll(cx); !ok {
			return 0, false
		}
	}
	return s.counter.Load(), true
}

// BenchmarkSpawnJoin measures spawning a task from inside a task and
// awaiting its handle, per task. Compare BenchmarkGoSpawnJoin.
func BenchmarkSpawnJoin(b *testing.B) {
	r := benchRuntime(b)
	b.ReportAllocs()
	b.ResetTimer()
	got, err := rt.BlockOn(r, core.Future[int64](&spawnJoin{n: b.N}))
	if err != nil || got != int64(b.N) {
		b.Fatalf("got %d, %v", got, err)
	}
}

// BenchmarkGoSpawnJoin is the plain-Go counterpart of BenchmarkSpawnJoin:
// start a goroutine and wait for it, per goroutine.
func BenchmarkGoSpawnJoin(b *testing.B) {
	b.ReportAllocs()
	var counter atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < b.N; i++ {
		wg.Add(1)
		go func() { counter.Add(1); wg.Done() }()
	}
	wg.Wait()
	if counter.Load() != int64(b.N) {
		b.Fatal("lost goroutines")
	}
}

// yielder yields `left` times, then completes.
type yielder struct {
	left int
	y    core.Future[core.Unit]
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
			return core.Unit{}, true
		}
		f.left--
		f.y = core.Yield()
	}
}

// BenchmarkYield measures one yield (the task is rescheduled behind the
// others and polled again), per yield, with 200 tasks yielding in turn as in
// workload W3. Compare BenchmarkGoYield.
func BenchmarkYield(b *testing.B) {
	r := benchRuntime(b)
	const tasks = 200
	per := b.N/tasks + 1
	b.ReportAllocs()
	b.ResetTimer()
	root := &spawnAll{}
	for i := 0; i < tasks; i++ {
		root.fs = append(root.fs, &yielder{left: per})
	}
	if _, err := rt.BlockOn(r, core.Future[int](root)); err != nil {
		b.Fatal(err)
	}
}

// spawnAll spawns each of fs and waits for all of them.
type spawnAll struct {
	fs   []core.Future[core.Unit]
	hs   []*core.JoinHandle[core.Unit]
	next int
}

func (s *spawnAll) Poll(cx *core.Context) (int, bool) {
	if s.hs == nil {
		for _, f := range s.fs {
			s.hs = append(s.hs, core.Spawn(cx, f))
		}
	}
	for ; s.next < len(s.hs); s.next++ {
		if _, ok := s.hs[s.next].Poll(cx); !ok {
			return 0, false
		}
	}
	return len(s.hs), true
}

// BenchmarkGoYield is the plain-Go counterpart of BenchmarkYield: 200
// goroutines each calling runtime.Gosched, per call.
func BenchmarkGoYield(b *testing.B) {
	const tasks = 200
	per := b.N/tasks + 1
	b.ReportAllocs()
	var wg sync.WaitGroup
	for i := 0; i < tasks; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < per; j++ {
				gosched()
			}
		}()
	}
	wg.Wait()
}
