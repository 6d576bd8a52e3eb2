package co_test

import (
	"iter"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
)

// BenchmarkSpawnCoroutineTask spawns b.N coroutine tasks from one task on
// the single-goroutine test scheduler; each adds to a counter. It measures
// the whole life of a short coroutine task: spawn, a coroutine from the
// pool, the body, the coroutine back to the pool.
func BenchmarkSpawnCoroutineTask(b *testing.B) {
	r := newRuntime(b)
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	_, _ = co.Main(r, func(c *co.Ctx) (int, error) {
		for range b.N {
			co.Go(c, func(*co.Ctx) int { n.Add(1); return 0 })
		}
		for n.Load() < int64(b.N) {
			c.Yield()
		}
		return 0, nil
	})
}

// BenchmarkSpawnPollTask is the same with a poll-driven task, for
// comparison.
func BenchmarkSpawnPollTask(b *testing.B) {
	r := newRuntime(b)
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	_, _ = co.Main(r, func(c *co.Ctx) (int, error) {
		for range b.N {
			core.Spawn(c, core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { n.Add(1); return 0, true })))
		}
		for n.Load() < int64(b.N) {
			c.Yield()
		}
		return 0, nil
	})
}

// BenchmarkSuspendResume is one suspension of a body and its resumption:
// a Yield, which the test scheduler runs again at once.
func BenchmarkSuspendResume(b *testing.B) {
	r := newRuntime(b)
	b.ReportAllocs()
	b.ResetTimer()
	_, _ = co.Main(r, func(c *co.Ctx) (int, error) {
		for range b.N {
			c.Yield()
		}
		return 0, nil
	})
}

// BenchmarkPullSwitch is the floor under every suspension: one iter.Pull
// next and the yield that returns from it, with nothing else, the two
// coroutine switches a suspended body costs. W12b (coroutine ping-pong)
// suspends twice per round trip, so its round trip costs W4's (the same
// program without coroutines) plus at least two of these.
func BenchmarkPullSwitch(b *testing.B) {
	next, stop := iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
	defer stop()
	b.ResetTimer()
	for range b.N {
		next()
	}
}
