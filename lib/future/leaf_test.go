package future_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

func TestReadyIsReadyWithItsValueOnTheFirstPoll(t *testing.T) {
	v, ok := pollOnce(future.Ready("hello"), nil)
	require.True(t, ok)
	require.Equal(t, "hello", v)
}

func TestReadyPolledAgainAfterReadyPanics(t *testing.T) {
	f := future.Ready(1)
	_, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.PanicsWithValue(t, "future.Ready: polled after it returned ready or was dropped",
		func() { pollOnce(f, nil) })
}

func TestPendingIsNeverReadyAndNeverWakes(t *testing.T) {
	w := &countingWaker{}
	f := future.Pending[int]()
	for range 3 {
		_, ok := pollOnce(f, w)
		require.False(t, ok)
	}
	require.Zero(t, w.Count())
	core.Drop(f)
	_, ok := pollOnce(f, w)
	require.False(t, ok, "Pending holds no state, so a poll after Drop is harmless")
}

func TestFromFuncCallsTheFunctionOnEveryPoll(t *testing.T) {
	calls := 0
	f := future.FromFunc(func(cx *core.Context) (int, bool) {
		calls++
		if calls < 3 {
			cx.Waker().Wake()
			return 0, false
		}
		return calls * 10, true
	})
	w := &countingWaker{}
	_, ok := pollOnce(f, w)
	require.False(t, ok)
	_, ok = pollOnce(f, w)
	require.False(t, ok)
	v, ok := pollOnce(f, w)
	require.True(t, ok)
	require.Equal(t, 30, v)
	require.Equal(t, 3, calls)
	require.EqualValues(t, 2, w.Count())
}

func TestLazyRunsItsFunctionOnTheFirstPollOnly(t *testing.T) {
	runs := 0
	f := future.Lazy(func() string { runs++; return "computed" })
	require.Zero(t, runs, "Lazy must not run before it is polled")
	v, ok := pollOnce(f, nil)
	require.True(t, ok)
	require.Equal(t, "computed", v)
	require.Equal(t, 1, runs)
	require.Panics(t, func() { pollOnce(f, nil) })
	require.Equal(t, 1, runs)
}

func TestLazyDroppedBeforeItsFirstPollNeverRuns(t *testing.T) {
	runs := 0
	f := future.Lazy(func() int { runs++; return 0 })
	core.Drop(f)
	require.Panics(t, func() { pollOnce(f, nil) })
	require.Zero(t, runs)
}

func TestConstructorsRejectNilArgumentsWithAClearPanic(t *testing.T) {
	fut := future.Ready(1)
	cases := map[string]struct {
		call func()
		msg  string
	}{
		"FromFunc":   {func() { future.FromFunc[int](nil) }, "future.FromFunc: nil function"},
		"Lazy":       {func() { future.Lazy[int](nil) }, "future.Lazy: nil function"},
		"Map":        {func() { future.Map[int, int](nil, func(int) int { return 0 }) }, "future.Map: nil future or function"},
		"Then":       {func() { future.Then[int, int](fut, nil) }, "future.Then: nil future or function"},
		"Join2":      {func() { future.Join2[int, int](fut, nil) }, "future.Join2: nil future"},
		"JoinAll":    {func() { future.JoinAll([]core.Future[int]{fut, nil}) }, "future.JoinAll: future 1 is nil"},
		"TryJoinAll": {func() { future.TryJoinAll([]core.Future[core.Result[int]]{nil}) }, "future.TryJoinAll: future 0 is nil"},
		"Select":     {func() { future.Select[int]() }, "future.Select: no futures to select from"},
		"Select nil": {func() { future.Select(fut, fut, nil) }, "future.Select: future 2 is nil"},
		"Select2":    {func() { future.Select2[int, int](nil, fut) }, "future.Select2: nil future"},
		"Wait":       {func() { future.Wait[int](nil) }, "future.Wait: nil future"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.PanicsWithValue(t, c.msg, c.call)
		})
	}
}
