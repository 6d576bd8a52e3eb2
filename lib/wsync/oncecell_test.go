package wsync_test

import (
	"errors"
	gosync "sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync"
)

// gate is a future that is pending until opened, then ready with v. It
// records whether it was dropped.
type gate[T any] struct {
	open    bool
	v       T
	dropped bool
}

func (g *gate[T]) Poll(*core.Context) (T, bool) {
	var zero T
	if !g.open {
		return zero, false
	}
	return g.v, true
}
func (g *gate[T]) Drop() { g.dropped = true }

func TestGetOrInitRunsOneInitialiserAndEveryoneGetsItsValue(t *testing.T) {
	var c wsync.OnceCell[int]
	g := &gate[int]{v: 42}
	calls := 0
	init := func() core.Future[int] { calls++; return g }
	a, b := newHand(), newHand()
	fa, fb := c.GetOrInit(init), c.GetOrInit(init)
	_, ok := poll(a, core.Future[int](fa))
	require.False(t, ok)
	_, ok = poll(b, core.Future[int](fb))
	require.False(t, ok)
	assert.Equal(t, 1, calls, "only the first poller initialises")
	g.open = true
	v, ok := poll(a, core.Future[int](fa))
	require.True(t, ok)
	assert.Equal(t, 42, v)
	assert.True(t, b.Woken(), "setting the value releases the waiters")
	v, ok = poll(b, core.Future[int](fb))
	require.True(t, ok)
	assert.Equal(t, 42, v)
	got, set := c.Get()
	assert.True(t, set)
	assert.Equal(t, 42, got)
	v, ok = poll(newHand(), core.Future[int](c.GetOrInit(init)))
	require.True(t, ok)
	assert.Equal(t, 42, v)
	assert.Equal(t, 1, calls)
}

func TestDroppedInitialiserHandsOverToTheNextWaiter(t *testing.T) {
	var c wsync.OnceCell[string]
	first := &gate[string]{v: "first"}
	second := &gate[string]{v: "second", open: true}
	a, b := newHand(), newHand()
	fa := c.GetOrInit(func() core.Future[string] { return first })
	fb := c.GetOrInit(func() core.Future[string] { return second })
	_, ok := poll(a, core.Future[string](fa))
	require.False(t, ok)
	_, ok = poll(b, core.Future[string](fb))
	require.False(t, ok)
	fa.Drop()
	assert.True(t, first.dropped, "the abandoned initialiser is dropped")
	assert.True(t, b.Woken())
	v, ok := poll(b, core.Future[string](fb))
	require.True(t, ok)
	assert.Equal(t, "second", v)
}

func TestFailedTryInitLeavesTheCellEmptyForTheNextWaiter(t *testing.T) {
	var c wsync.OnceCell[int]
	boom := errors.New("boom")
	fail := &gate[core.Result[int]]{v: core.Result[int]{Err: boom}}
	succeed := &gate[core.Result[int]]{v: core.Result[int]{Value: 7}, open: true}
	a, b := newHand(), newHand()
	fa := c.GetOrTryInit(func() core.Future[core.Result[int]] { return fail })
	fb := c.GetOrTryInit(func() core.Future[core.Result[int]] { return succeed })
	_, ok := poll(a, core.Future[core.Result[int]](fa))
	require.False(t, ok)
	_, ok = poll(b, core.Future[core.Result[int]](fb))
	require.False(t, ok)
	fail.open = true
	r, ok := poll(a, core.Future[core.Result[int]](fa))
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, boom)
	assert.False(t, c.Initialized())
	assert.True(t, b.Woken())
	r, ok = poll(b, core.Future[core.Result[int]](fb))
	require.True(t, ok)
	require.NoError(t, r.Err)
	assert.Equal(t, 7, r.Value)
}

func TestSetFailsWhenSetOrInitialising(t *testing.T) {
	var c wsync.OnceCell[int]
	g := &gate[int]{v: 1}
	f := c.GetOrInit(func() core.Future[int] { return g })
	_, ok := poll(newHand(), core.Future[int](f))
	require.False(t, ok)
	assert.ErrorIs(t, c.Set(5), wsync.ErrInitializing)
	f.Drop()
	require.NoError(t, c.Set(5))
	assert.ErrorIs(t, c.Set(6), wsync.ErrAlreadySet)
	v, _ := c.Get()
	assert.Equal(t, 5, v)
}

func TestEmptyOnceCellGetReportsUnset(t *testing.T) {
	var c wsync.OnceCell[int]
	_, ok := c.Get()
	assert.False(t, ok)
	assert.False(t, c.Initialized())
}

func TestOnceCellInitialisesOnceUnderConcurrency(t *testing.T) {
	var c wsync.OnceCell[int]
	var calls atomic.Int64
	var wg gosync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			v := future.Wait[int](c.GetOrInit(func() core.Future[int] {
				calls.Add(1)
				return future.Ready(g + 100)
			}))
			got, _ := c.Get()
			assert.Equal(t, got, v)
		}(g)
	}
	wg.Wait()
	assert.EqualValues(t, 1, calls.Load())
}

func TestWaiterDroppedWhenHandedTheRightToInitialisePassesItOn(t *testing.T) {
	var c wsync.OnceCell[int]
	boom := errors.New("boom")
	fail := &gate[core.Result[int]]{v: core.Result[int]{Err: boom}}
	a, b, d := newHand(), newHand(), newHand()
	fa := c.GetOrTryInit(func() core.Future[core.Result[int]] { return fail })
	fb := c.GetOrInit(func() core.Future[int] { return future.Ready(1) })
	fd := c.GetOrInit(func() core.Future[int] { return future.Ready(2) })
	_, ok := poll(a, core.Future[core.Result[int]](fa))
	require.False(t, ok, "a initialises")
	for _, p := range []struct {
		h *hand
		f core.Future[int]
	}{{b, fb}, {d, fd}} {
		_, ok := poll(p.h, p.f)
		require.False(t, ok)
	}
	fail.open = true
	_, ok = poll(a, core.Future[core.Result[int]](fa))
	require.True(t, ok, "the initialiser failed")
	require.True(t, b.Woken())
	fb.Drop() // dropped at the moment it was handed the right to initialise
	assert.True(t, d.Woken())
	v, ok := poll(d, core.Future[int](fd))
	require.True(t, ok)
	assert.Equal(t, 2, v)
}
