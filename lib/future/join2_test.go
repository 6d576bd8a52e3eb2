package future_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

func TestJoin2IsReadyWithBothOutputsOnceBothAreReady(t *testing.T) {
	a := newProbe("a", 1)
	b := newProbe("b", "two")
	f := future.Join2[int, string](a, b)

	_, ok := pollOnce(f, nil)
	require.False(t, ok)
	b.Release()
	_, ok = pollOnce(f, nil)
	require.False(t, ok)
	a.Release()
	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, future.Pair[int, string]{First: 1, Second: "two"}, v)
	requireNoViolations(t, a)
	requireNoViolations(t, b)
}

func TestJoin2NeverPollsAChildAgainAfterItWasReady(t *testing.T) {
	a := newProbe("a", 1)
	a.readyOnPoll = 1
	b := newProbe("b", 2)
	b.readyOnPoll = 4
	f := future.Join2[int, int](a, b)
	for range 3 {
		_, ok := pollOnce(f, nil)
		require.False(t, ok)
	}
	_, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, 1, a.Polls())
	require.Equal(t, 4, b.Polls())
	requireNoViolations(t, a)
	requireNoViolations(t, b)
}

func TestJoin2DropDropsOnlyTheUnfinishedChild(t *testing.T) {
	a := newProbe("a", 1)
	a.readyOnPoll = 1
	b := newProbe("b", 2)
	f := future.Join2[int, int](a, b)
	pollOnce(f, nil)
	core.Drop(f)
	core.Drop(f)
	require.Zero(t, a.Drops())
	require.Equal(t, 1, b.Drops())
	require.Panics(t, func() { pollOnce(f, nil) })
	requireNoViolations(t, a)
	requireNoViolations(t, b)
}

func TestJoin2DropBeforeAnyPollDropsBothChildren(t *testing.T) {
	a := newProbe("a", 1)
	b := newProbe("b", 2)
	core.Drop(future.Join2[int, int](a, b))
	require.Equal(t, 1, a.Drops())
	require.Equal(t, 1, b.Drops())
}

func TestJoin2DropAfterReadyDropsNothing(t *testing.T) {
	a := newProbe("a", 1)
	a.readyOnPoll = 1
	b := newProbe("b", 2)
	b.readyOnPoll = 1
	f := future.Join2[int, int](a, b)
	_, ok := pollOnce(f, nil)
	require.True(t, ok)
	core.Drop(f)
	require.Zero(t, a.Drops())
	require.Zero(t, b.Drops())
}

func TestJoin2AlternatesWhichChildIsPolledFirst(t *testing.T) {
	var log []string
	f := future.Join2(logFuture(&log, "a"), logFuture(&log, "b"))
	for range 3 {
		pollOnce(f, nil)
	}
	require.Equal(t, []string{"a", "b", "b", "a", "a", "b"}, log)
}
