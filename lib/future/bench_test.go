package future_test

import (
	"fmt"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

// BenchmarkJoinAllWakeOneChildOfN measures a wake of one child plus the
// JoinAll poll it causes. With per-child wakers the cost does not grow with
// the number of children.
func BenchmarkJoinAllWakeOneChildOfN(b *testing.B) {
	for _, n := range []int{10, 1_000, 100_000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			ps := make([]*probe[int], n)
			for i := range ps {
				ps[i] = newProbe("", i)
			}
			f := future.JoinAll(asFutures(ps))
			cx := core.NewContext(core.NoopWaker)
			f.Poll(cx)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				ps[i%n].Nudge()
				f.Poll(cx)
			}
		})
	}
}

// BenchmarkSelectOfTwoReady measures building and polling a two-branch select
// whose branches are ready, the shape of a select rebuilt in a loop.
func BenchmarkSelectOfTwoReady(b *testing.B) {
	cx := core.NewContext(core.NoopWaker)
	b.ReportAllocs()
	for range b.N {
		future.Select(future.Ready(1), future.Ready(2)).Poll(cx)
	}
}
