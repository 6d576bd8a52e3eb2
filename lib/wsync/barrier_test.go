package wsync_test

import (
	gosync "sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync"
)

func barrierPoll(h *hand, f *wsync.BarrierWaitFuture) (leader, ok bool) {
	return poll(h, core.Future[bool](f))
}

func TestBarrierReleasesEveryoneAtTheNthArrivalWithOneLeader(t *testing.T) {
	b := wsync.NewBarrier(3)
	a, c, d := newHand(), newHand(), newHand()
	fa, fc, fd := b.Wait(), b.Wait(), b.Wait()
	_, ok := barrierPoll(a, fa)
	require.False(t, ok)
	_, ok = barrierPoll(c, fc)
	require.False(t, ok)
	leader, ok := barrierPoll(d, fd)
	require.True(t, ok)
	assert.True(t, leader, "the n-th arrival leads")
	assert.True(t, a.Woken())
	assert.True(t, c.Woken())
	for _, p := range []struct {
		h *hand
		f *wsync.BarrierWaitFuture
	}{{a, fa}, {c, fc}} {
		leader, ok := barrierPoll(p.h, p.f)
		require.True(t, ok)
		assert.False(t, leader)
	}
}

func TestBarrierStartsANewGeneration(t *testing.T) {
	b := wsync.NewBarrier(2)
	for gen := 0; gen < 3; gen++ {
		a, c := newHand(), newHand()
		fa, fc := b.Wait(), b.Wait()
		_, ok := barrierPoll(a, fa)
		require.False(t, ok, "generation %d", gen)
		leader, ok := barrierPoll(c, fc)
		require.True(t, ok)
		assert.True(t, leader)
		leader, ok = barrierPoll(a, fa)
		require.True(t, ok)
		assert.False(t, leader)
	}
}

func TestDroppedBarrierWaitWithdrawsItsArrival(t *testing.T) {
	b := wsync.NewBarrier(2)
	a := newHand()
	fa := b.Wait()
	_, ok := barrierPoll(a, fa)
	require.False(t, ok)
	fa.Drop()
	c := newHand()
	fc := b.Wait()
	_, ok = barrierPoll(c, fc)
	require.False(t, ok, "the dropped wait no longer counts")
	leader, ok := barrierPoll(newHand(), b.Wait())
	require.True(t, ok)
	assert.True(t, leader)
	_, ok = barrierPoll(c, fc)
	require.True(t, ok)
}

func TestBarrierWaitDroppedAfterReleaseWithdrawsNothing(t *testing.T) {
	b := wsync.NewBarrier(2)
	a := newHand()
	fa := b.Wait()
	_, ok := barrierPoll(a, fa)
	require.False(t, ok)
	_, ok = barrierPoll(newHand(), b.Wait())
	require.True(t, ok)
	fa.Drop() // released but never polled again
	// The next generation still needs two arrivals.
	c := newHand()
	fc := b.Wait()
	_, ok = barrierPoll(c, fc)
	require.False(t, ok)
	_, ok = barrierPoll(newHand(), b.Wait())
	require.True(t, ok)
}

func TestBarrierOfZeroBehavesAsOne(t *testing.T) {
	b := wsync.NewBarrier(0)
	leader, ok := barrierPoll(newHand(), b.Wait())
	require.True(t, ok)
	assert.True(t, leader)
}

func TestBarrierHasOneLeaderPerGenerationUnderConcurrency(t *testing.T) {
	const n, gens = 4, 300
	b := wsync.NewBarrier(n)
	var leaders atomic.Int64
	var wg gosync.WaitGroup
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var f wsync.BarrierWaitFuture
			for i := 0; i < gens; i++ {
				if future.Wait[bool](b.WaitInto(&f)) {
					leaders.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	assert.EqualValues(t, gens, leaders.Load())
}
