package future_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

func TestMapAppliesItsFunctionToTheOutputOnce(t *testing.T) {
	p := newProbe("inner", 21)
	p.readyOnPoll = 2
	calls := 0
	f := future.Map(p, func(v int) string { calls++; return strconv.Itoa(v * 2) })

	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	require.Zero(t, calls)
	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, "42", v)
	require.Equal(t, 1, calls)
	requireNoViolations(t, p)
}

func TestMapDropDropsThePendingInnerFutureOnce(t *testing.T) {
	p := newProbe("inner", 1)
	f := future.Map(p, func(v int) int { return v })
	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	core.Drop(f)
	core.Drop(f)
	require.Equal(t, 1, p.Drops())
	requireNoViolations(t, p)
}

func TestMapDropAfterReadyDropsNothing(t *testing.T) {
	p := newProbe("inner", 1)
	p.readyOnPoll = 1
	f := future.Map(p, func(v int) int { return v })
	_, ok := pollOnce(f, nil)
	require.True(t, ok)
	core.Drop(f)
	require.Zero(t, p.Drops())
	requireNoViolations(t, p)
}

func TestMapPolledAfterReadyPanicsWithoutPollingTheInnerFuture(t *testing.T) {
	p := newProbe("inner", 1)
	p.readyOnPoll = 1
	f := future.Map(p, func(v int) int { return v })
	pollOnce(f, nil)
	require.PanicsWithValue(t, "future.Map: polled after it returned ready or was dropped",
		func() { pollOnce(f, nil) })
	require.Equal(t, 1, p.Polls())
	requireNoViolations(t, p)
}

func TestThenPollsTheSecondStageInThePollThatFinishedTheFirst(t *testing.T) {
	first := newProbe("first", 5)
	first.readyOnPoll = 1
	second := newProbe("second", "five")
	second.readyOnPoll = 1
	var got int
	f := future.Then(first, func(v int) core.Future[string] { got = v; return second })

	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, "five", v)
	require.Equal(t, 5, got)
	require.Equal(t, 1, first.Polls())
	require.Equal(t, 1, second.Polls())
	requireNoViolations(t, first)
	requireNoViolations(t, second)
}

func TestThenDropDropsTheFirstStageWhileItIsLive(t *testing.T) {
	first := newProbe("first", 5)
	called := false
	f := future.Then(first, func(int) core.Future[int] { called = true; return future.Ready(0) })
	pollOnce(f, nil)
	core.Drop(f)
	core.Drop(f)
	require.Equal(t, 1, first.Drops())
	require.False(t, called)
	requireNoViolations(t, first)
}

func TestThenDropDropsTheSecondStageOnceTheFirstFinished(t *testing.T) {
	first := newProbe("first", 5)
	first.readyOnPoll = 1
	second := newProbe("second", 6)
	f := future.Then(first, func(int) core.Future[int] { return second })
	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	core.Drop(f)
	require.Zero(t, first.Drops(), "the first stage completed and must not be dropped")
	require.Equal(t, 1, second.Drops())
	requireNoViolations(t, first)
	requireNoViolations(t, second)
}

func TestThenDropAfterReadyDropsNothing(t *testing.T) {
	first := newProbe("first", 5)
	first.readyOnPoll = 1
	second := newProbe("second", 6)
	second.readyOnPoll = 2
	f := future.Then(first, func(int) core.Future[int] { return second })
	pollOnce(f, nil)
	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, 6, v)
	core.Drop(f)
	require.Zero(t, first.Drops())
	require.Zero(t, second.Drops())
	requireNoViolations(t, first)
	requireNoViolations(t, second)
}

func TestThenRejectsANilSecondStage(t *testing.T) {
	f := future.Then(future.Ready(1), func(int) core.Future[int] { return nil })
	require.PanicsWithValue(t, "future.Then: the function returned a nil future",
		func() { pollOnce(f, nil) })
}
