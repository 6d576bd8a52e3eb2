package future_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

func strictProbes(n int) []*probe[int] {
	vals := make([]int, n)
	for i := range vals {
		vals[i] = i * 100
	}
	ps := probes("child", vals...)
	for _, p := range ps {
		p.strict = true
	}
	return ps
}

func TestJoinAllReturnsOutputsInInputOrder(t *testing.T) {
	ps := strictProbes(4)
	f := future.JoinAll(asFutures(ps))
	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	for i := len(ps) - 1; i >= 0; i-- { // finish in reverse order
		ps[i].Release()
		v, ok := pollOnce(f, nil)
		require.Equal(t, i == 0, ok)
		if ok {
			require.Equal(t, []int{0, 100, 200, 300}, v)
		}
	}
	requireNoViolations(t, ps...)
}

func TestJoinAllOfNoFuturesIsReadyAtOnceWithAnEmptySlice(t *testing.T) {
	v, ok := pollOnce(future.JoinAll[int](nil), nil)
	require.True(t, ok)
	require.NotNil(t, v)
	require.Empty(t, v)
}

func TestJoinAllDoesNotModifyTheCallersSlice(t *testing.T) {
	ps := strictProbes(2)
	in := asFutures(ps)
	ps[0].readyOnPoll = 1
	ps[1].readyOnPoll = 1
	_, ok := pollOnce(future.JoinAll(in), nil)
	require.True(t, ok)
	require.Same(t, ps[0], in[0])
	require.Same(t, ps[1], in[1])
}

func TestJoinAllRepollsOnlyTheChildrenThatWereWoken(t *testing.T) {
	const n = 50
	ps := strictProbes(n)
	f := future.JoinAll(asFutures(ps))
	w := &countingWaker{}
	_, ok := pollOnce(f, w)
	require.False(t, ok)
	for _, p := range ps {
		require.Equal(t, 1, p.Polls(), "the first poll polls every child once")
	}

	ps[7].Nudge()
	ps[31].Nudge()
	_, ok = pollOnce(f, w)
	require.False(t, ok)
	// Parent polls without any wake poll no child at all.
	for range 3 {
		_, ok = pollOnce(f, w)
		require.False(t, ok)
	}
	total := 0
	for i, p := range ps {
		want := 1
		if i == 7 || i == 31 {
			want = 2
		}
		require.Equal(t, want, p.Polls(), "child %d", i)
		total += p.Polls()
	}
	require.Equal(t, n+2, total)
	requireNoViolations(t, ps...)
}

func TestJoinAllWakesOfAChildReachTheParentWakerOncePerPoll(t *testing.T) {
	ps := strictProbes(3)
	f := future.JoinAll(asFutures(ps))
	w := &countingWaker{}
	pollOnce(f, w)
	require.Zero(t, w.Count())

	ps[1].Nudge()
	require.EqualValues(t, 1, w.Count())
	ps[1].Nudge()
	ps[1].Nudge()
	require.EqualValues(t, 1, w.Count(), "a child already queued does not wake the parent again")
	pollOnce(f, w)
	require.Equal(t, 2, ps[1].Polls(), "three wakes between two polls cause one poll")

	ps[1].Nudge()
	require.EqualValues(t, 2, w.Count(), "after the poll, the next wake reaches the parent again")
	requireNoViolations(t, ps...)
}

func TestJoinAllChildWakesReachTheWakerOfTheLatestPoll(t *testing.T) {
	ps := strictProbes(2)
	f := future.JoinAll(asFutures(ps))
	w1, w2 := &countingWaker{}, &countingWaker{}
	pollOnce(f, w1)
	pollOnce(f, w2)
	ps[0].Nudge()
	require.Zero(t, w1.Count())
	require.EqualValues(t, 1, w2.Count())
}

// lingering is a future that keeps its waker after it returned ready and has
// no Drop: a careless resource whose late wakes a join must absorb.
type lingering struct {
	waker   core.Waker
	readyOn int
	polls   int
}

func (l *lingering) Poll(cx *core.Context) (int, bool) {
	l.polls++
	l.waker = cx.Waker()
	return l.polls, l.polls >= l.readyOn
}

func TestJoinAllLateWakesOfAFinishedChildNeitherRepollItNorReachTheParent(t *testing.T) {
	done := &lingering{readyOn: 1}
	other := newProbe("other", 0)
	other.strict = true
	f := future.JoinAll([]core.Future[int]{done, other})
	w := &countingWaker{}
	pollOnce(f, w)
	require.Equal(t, 1, done.polls)

	done.waker.Wake() // the child finished: this wake is stale
	require.Zero(t, w.Count(), "a finished child's late wake does not wake the parent")
	pollOnce(f, w)
	require.Equal(t, 1, done.polls, "a finished child is never polled again")

	other.Release()
	_, ok := pollOnce(f, w)
	require.True(t, ok)
	before := w.Count()
	done.waker.Wake()
	require.Equal(t, before, w.Count(), "after JoinAll returned ready, child wakes stop at JoinAll")
	requireNoViolations(t, other)
}

func TestJoinAllChildWakesAfterDropDoNotReachTheParent(t *testing.T) {
	child := &lingering{readyOn: 100}
	f := future.JoinAll([]core.Future[int]{child})
	w := &countingWaker{}
	pollOnce(f, w)
	core.Drop(f)
	child.waker.Wake()
	require.Zero(t, w.Count())
}

func TestJoinAllPollsAChildThatWokeItselfAgainOnTheNextPollOnly(t *testing.T) {
	polls := 0
	yielder := future.FromFunc(func(cx *core.Context) (int, bool) {
		polls++
		if polls == 3 {
			return 3, true
		}
		cx.Waker().Wake() // yield: ask to be polled again
		return 0, false
	})
	f := future.JoinAll([]core.Future[int]{yielder})
	w := &countingWaker{}
	_, ok := pollOnce(f, w)
	require.False(t, ok)
	require.Equal(t, 1, polls, "a self-wake must not loop inside one poll")
	require.EqualValues(t, 1, w.Count())
	_, ok = pollOnce(f, w)
	require.False(t, ok)
	v, ok := pollOnce(f, w)
	require.True(t, ok)
	require.Equal(t, []int{3}, v)
}

func TestJoinAllDropDropsEveryUnfinishedChildOnceAndNoFinishedOne(t *testing.T) {
	ps := strictProbes(5)
	ps[1].readyOnPoll = 1
	ps[3].readyOnPoll = 1
	f := future.JoinAll(asFutures(ps))
	pollOnce(f, nil)
	core.Drop(f)
	core.Drop(f)
	require.Equal(t, []int{1, 0, 1, 0, 1}, []int{ps[0].Drops(), ps[1].Drops(), ps[2].Drops(), ps[3].Drops(), ps[4].Drops()})
	require.Panics(t, func() { pollOnce(f, nil) })
	requireNoViolations(t, ps...)
}

func TestJoinAllDropBeforeTheFirstPollDropsEveryChild(t *testing.T) {
	ps := strictProbes(3)
	core.Drop(future.JoinAll(asFutures(ps)))
	for _, p := range ps {
		require.Equal(t, 1, p.Drops())
		require.Zero(t, p.Polls())
	}
}

func TestJoinAllStillDropsTheOtherChildrenWhenOneDropPanics(t *testing.T) {
	ps := strictProbes(3)
	bad := future.FromFunc(func(*core.Context) (int, bool) { return 0, false })
	f := future.JoinAll([]core.Future[int]{ps[0], &panickyDrop{bad}, ps[1], ps[2]})
	pollOnce(f, nil)
	require.PanicsWithValue(t, "drop failed", func() { core.Drop(f) })
	for _, p := range ps {
		require.Equal(t, 1, p.Drops())
	}
	requireNoViolations(t, ps...)
}

type panickyDrop struct{ core.Future[int] }

func (*panickyDrop) Drop() { panic("drop failed") }

func TestJoinAllYieldsWhenTheBudgetIsSpentAndPollsTheSkippedChildrenFirstNextTime(t *testing.T) {
	var log []string
	hog := future.FromFunc(func(cx *core.Context) (int, bool) {
		log = append(log, "hog")
		for cx.Proceed() { // a resource with endless work: it spends the whole budget
		}
		return 0, false
	})
	f := future.JoinAll([]core.Future[int]{hog, logFuture(&log, "a"), logFuture(&log, "b")})
	w := &countingWaker{}
	cx, reset := budgetContext(w, core.Budget)

	_, ok := f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, []string{"hog"}, log, "once the budget is spent no further child is polled")
	require.Positive(t, w.Count(), "the task must be woken to continue")

	reset(core.Budget)
	log = nil
	_, ok = f.Poll(cx)
	require.False(t, ok)
	require.Equal(t, []string{"a", "b", "hog"}, log, "the skipped children go first")
}

func TestJoinAllConsumesNoBudgetOfItsOwn(t *testing.T) {
	ps := strictProbes(3)
	f := future.JoinAll(asFutures(ps))
	cx, _ := budgetContext(core.NoopWaker, 10)
	f.Poll(cx)
	require.Equal(t, 10, cx.BudgetRemaining())
}

func TestJoinAllPollAllocatesNothingOnceRunning(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	ps := strictProbes(8)
	f := future.JoinAll(asFutures(ps))
	cx := core.NewContext(&countingWaker{})
	f.Poll(cx)
	allocs := testing.AllocsPerRun(100, func() {
		ps[3].Nudge()
		f.Poll(cx)
	})
	require.Zero(t, allocs)
}

func TestTryJoinAllIsReadyWithAllValuesInInputOrderWhenNoneFails(t *testing.T) {
	ps := probes("child", core.Result[int]{Value: 1}, core.Result[int]{Value: 2}, core.Result[int]{Value: 3})
	f := future.TryJoinAll(asFutures(ps))
	pollOnce(f, nil)
	ps[2].Release()
	ps[0].Release()
	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	ps[1].Release()
	r, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.NoError(t, r.Err)
	require.Equal(t, []int{1, 2, 3}, r.Value)
	requireNoViolations(t, ps...)
}

func TestTryJoinAllFirstErrorDropsEveryPendingChildAndIsReturned(t *testing.T) {
	boom := errors.New("boom")
	ps := probes("child",
		core.Result[int]{Value: 1},
		core.Result[int]{},
		core.Result[int]{Err: boom},
		core.Result[int]{})
	ps[0].readyOnPoll = 1
	f := future.TryJoinAll(asFutures(ps))
	_, ok := pollOnce(f, nil)
	require.False(t, ok)

	ps[2].Release()
	r, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.ErrorIs(t, r.Err, boom)
	require.Nil(t, r.Value)
	require.Equal(t, []int{0, 1, 0, 1}, []int{ps[0].Drops(), ps[1].Drops(), ps[2].Drops(), ps[3].Drops()},
		"pending children are dropped once; finished ones (including the failed one) never")

	// Late wakes and a Drop after the error change nothing.
	ps[1].Nudge()
	core.Drop(f)
	require.Equal(t, 1, ps[1].Drops())
	requireNoViolations(t, ps...)
}

func TestTryJoinAllReturnsTheFirstErrorInPollOrder(t *testing.T) {
	first, second := errors.New("first"), errors.New("second")
	ps := probes("child", core.Result[int]{}, core.Result[int]{Err: first}, core.Result[int]{Err: second})
	ps[1].readyOnPoll = 1
	ps[2].readyOnPoll = 1
	r, ok := pollOnce(future.TryJoinAll(asFutures(ps)), nil)
	require.True(t, ok)
	require.ErrorIs(t, r.Err, first)
	require.Equal(t, 1, ps[0].Drops())
	require.Zero(t, ps[2].Polls(), "polling stops at the first error; the rest are dropped unpolled")
	require.Equal(t, 1, ps[2].Drops())
	requireNoViolations(t, ps...)
}

func TestTryJoinAllDropDropsEveryPendingChildOnce(t *testing.T) {
	ps := probes("child", core.Result[int]{Value: 1}, core.Result[int]{})
	ps[0].readyOnPoll = 1
	f := future.TryJoinAll(asFutures(ps))
	pollOnce(f, nil)
	core.Drop(f)
	core.Drop(f)
	require.Zero(t, ps[0].Drops())
	require.Equal(t, 1, ps[1].Drops())
	requireNoViolations(t, ps...)
}

func TestTryJoinAllRepollsOnlyTheChildrenThatWereWoken(t *testing.T) {
	ps := probes("child", core.Result[int]{}, core.Result[int]{}, core.Result[int]{})
	for _, p := range ps {
		p.strict = true
	}
	f := future.TryJoinAll(asFutures(ps))
	pollOnce(f, nil)
	ps[1].Nudge()
	pollOnce(f, nil)
	require.Equal(t, []int{1, 2, 1}, []int{ps[0].Polls(), ps[1].Polls(), ps[2].Polls()})
	requireNoViolations(t, ps...)
}
