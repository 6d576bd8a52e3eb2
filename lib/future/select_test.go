package future_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

func TestSelectIsReadyWithTheFirstReadyFutureAndItsIndex(t *testing.T) {
	ps := probes("branch", "a", "b", "c")
	f := future.Select(asFutures(ps)...)
	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	ps[2].Release()
	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, future.Selected[string]{Index: 2, Value: "c"}, v)
	requireNoViolations(t, ps...)
}

func TestSelectDropsEveryLoserExactlyOnceAndNeverTheWinner(t *testing.T) {
	ps := probes("branch", 0, 1, 2, 3, 4)
	f := future.Select(asFutures(ps)...)
	pollOnce(f, nil)
	ps[3].Release()
	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, 3, v.Index)
	for i, p := range ps {
		want := 1
		if i == 3 {
			want = 0
		}
		require.Equal(t, want, p.Drops(), "branch %d", i)
	}
	core.Drop(f) // after ready: nothing more is dropped
	for i, p := range ps {
		require.LessOrEqual(t, p.Drops(), 1, "branch %d", i)
	}
	require.Panics(t, func() { pollOnce(f, nil) })
	requireNoViolations(t, ps...)
}

func TestSelectDropDropsEveryBranchOnce(t *testing.T) {
	ps := probes("branch", 0, 1, 2)
	f := future.Select(asFutures(ps)...)
	pollOnce(f, nil)
	core.Drop(f)
	core.Drop(f)
	for _, p := range ps {
		require.Equal(t, 1, p.Drops())
	}
	require.Panics(t, func() { pollOnce(f, nil) })
	requireNoViolations(t, ps...)
}

func TestSelectWhenSeveralBranchesAreReadyOnlyOneWinsAndTheOthersAreDropped(t *testing.T) {
	ps := probes("branch", 0, 1, 2, 3)
	for _, p := range ps {
		p.readyOnPoll = 1
	}
	v, ok := pollOnce(future.Select(asFutures(ps)...), nil)
	require.True(t, ok)
	polledAfterWin, dropped := 0, 0
	for i, p := range ps {
		if i == v.Index {
			require.Equal(t, 1, p.Polls())
			require.Zero(t, p.Drops())
			continue
		}
		polledAfterWin += p.Polls() // every branch is ready, so the first one polled wins
		dropped += p.Drops()
	}
	require.Zero(t, polledAfterWin, "no branch is polled once one has won")
	require.Equal(t, 3, dropped)
	requireNoViolations(t, ps...)
}

func TestSelectStartsAtVaryingBranchesSoEveryReadyBranchCanWin(t *testing.T) {
	wins := make([]int, 3)
	for range 300 {
		v, ok := pollOnce(future.Select(future.Ready(0), future.Ready(1), future.Ready(2)), nil)
		require.True(t, ok)
		wins[v.Index]++
	}
	for i, n := range wins {
		require.Positive(t, n, "branch %d never won across 300 fresh selects", i)
	}
}

func TestSelectRotatesItsStartFromPollToPoll(t *testing.T) {
	var log []string
	f := future.Select(logFuture(&log, "0"), logFuture(&log, "1"), logFuture(&log, "2"))
	firsts := map[string]int{}
	for range 300 {
		log = log[:0]
		pollOnce(f, nil)
		require.Len(t, log, 3, "every branch is polled each poll")
		firsts[log[0]]++
	}
	require.Len(t, firsts, 3, "each branch is polled first at some poll: %v", firsts)
}

func TestSelectReturnsPendingWithoutPollingWhenTheBudgetIsSpent(t *testing.T) {
	p := newProbe("ready", 7)
	p.readyOnPoll = 1
	w := &countingWaker{}
	cx, reset := budgetContext(w, 0)
	f := future.Select[int](p)

	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Zero(t, p.Polls())
	require.EqualValues(t, 1, w.Count(), "the task is woken so that it runs again")
	require.EqualValues(t, 1, cx.BudgetExhaustions())

	reset(core.Budget)
	v, ok := f.Poll(cx)
	require.True(t, ok)
	require.Equal(t, 7, v.Value)
	requireNoViolations(t, p)
}

func TestSelectConsumesNoBudgetOfItsOwn(t *testing.T) {
	cx, _ := budgetContext(core.NoopWaker, 5)
	f := future.Select(future.Pending[int](), future.Pending[int]())
	f.Poll(cx)
	require.Equal(t, 5, cx.BudgetRemaining())
}

func TestSelectOverAlwaysReadyBranchesInALoopStillYields(t *testing.T) {
	w := &countingWaker{}
	cx, _ := budgetContext(w, 3)
	// A budgeted branch that always has data, like a busy channel.
	busy := future.FromFunc(func(cx *core.Context) (int, bool) {
		if !cx.Proceed() {
			return 0, false
		}
		return 1, true
	})
	iterations := 0
	for {
		if _, ok := future.Select(busy, future.Pending[int]()).Poll(cx); !ok {
			break
		}
		iterations++
		require.Less(t, iterations, 10, "the loop must run out of budget")
	}
	require.Equal(t, 3, iterations)
	require.Positive(t, w.Count())
}

func TestSelect2ReportsWhichSideWonAndDropsTheOther(t *testing.T) {
	a := newProbe("a", 1)
	b := newProbe("b", "bee")
	f := future.Select2[int, string](a, b)
	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	b.Release()
	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, future.Either[int, string]{Index: 1, Second: "bee"}, v)
	require.Equal(t, 1, a.Drops())
	require.Zero(t, b.Drops())
	core.Drop(f)
	require.Equal(t, 1, a.Drops())
	require.Panics(t, func() { pollOnce(f, nil) })
	requireNoViolations(t, a)
	requireNoViolations(t, b)

	c := newProbe("c", 3)
	c.readyOnPoll = 1
	d := newProbe("d", 4)
	v2, ok := pollOnce(future.Select2[int, int](c, d), nil)
	require.True(t, ok)
	require.Equal(t, future.Either[int, int]{Index: 0, First: 3}, v2)
	require.Equal(t, 1, d.Drops())
	requireNoViolations(t, c)
	requireNoViolations(t, d)
}

func TestSelect2DropDropsBothFuturesOnce(t *testing.T) {
	a := newProbe("a", 1)
	b := newProbe("b", 2)
	f := future.Select2[int, int](a, b)
	pollOnce(f, nil)
	core.Drop(f)
	core.Drop(f)
	require.Equal(t, 1, a.Drops())
	require.Equal(t, 1, b.Drops())
	requireNoViolations(t, a)
	requireNoViolations(t, b)
}

func TestSelect2StartsAtVaryingSides(t *testing.T) {
	wins := [2]int{}
	for range 100 {
		v, _ := pollOnce(future.Select2(future.Ready(0), future.Ready("")), nil)
		wins[v.Index]++
	}
	require.Positive(t, wins[0])
	require.Positive(t, wins[1])
}

func TestSelect2ChecksTheBudgetOnEntry(t *testing.T) {
	a := newProbe("a", 1)
	a.readyOnPoll = 1
	w := &countingWaker{}
	cx, _ := budgetContext(w, 0)
	_, ok := future.Select2[int, int](a, future.Pending[int]()).Poll(cx)
	require.False(t, ok)
	require.Zero(t, a.Polls())
	require.EqualValues(t, 1, w.Count())
}
