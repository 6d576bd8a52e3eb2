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

func notified(h *hand, f *wsync.NotifiedFuture) bool {
	_, ok := poll(h, core.Future[core.Unit](f))
	return ok
}

func TestNotifyOneWithNobodyWaitingStoresOnePermit(t *testing.T) {
	var n wsync.Notify
	n.NotifyOne()
	n.NotifyOne()
	assert.True(t, notified(newHand(), n.Notified()), "the permit completes the first wait")
	assert.False(t, notified(newHand(), n.Notified()), "only one permit is stored")
}

func TestNotifyOneWakesTheOldestWaiter(t *testing.T) {
	var n wsync.Notify
	a, b := newHand(), newHand()
	fa, fb := n.Notified(), n.Notified()
	require.False(t, notified(a, fa))
	require.False(t, notified(b, fb))
	n.NotifyOne()
	assert.True(t, a.Woken())
	assert.False(t, b.Woken())
	assert.True(t, notified(a, fa))
	assert.False(t, notified(b, fb))
	n.NotifyOne()
	assert.True(t, b.Woken())
	assert.True(t, notified(b, fb))
	assert.False(t, notified(newHand(), n.Notified()), "no permit was stored while someone waited")
}

func TestNotifyWaitersWakesOnlyCurrentWaiters(t *testing.T) {
	var n wsync.Notify
	a, b := newHand(), newHand()
	fa, fb := n.Notified(), n.Notified()
	require.False(t, notified(a, fa))
	require.False(t, notified(b, fb))
	n.NotifyWaiters()
	assert.True(t, a.Woken())
	assert.True(t, b.Woken())
	assert.True(t, notified(a, fa))
	assert.True(t, notified(b, fb))
	assert.False(t, notified(newHand(), n.Notified()), "NotifyWaiters stores no permit")
}

func TestNotifiedCreatedBeforeNotifyWaitersObservesItAtFirstPoll(t *testing.T) {
	var n wsync.Notify
	f := n.Notified()
	n.NotifyWaiters()
	later := n.Notified()
	assert.True(t, notified(newHand(), f))
	assert.False(t, notified(newHand(), later))
}

func TestNotifyWaitersKeepsAStoredPermit(t *testing.T) {
	var n wsync.Notify
	n.NotifyOne()
	n.NotifyWaiters()
	assert.True(t, notified(newHand(), n.Notified()))
}

func TestNotifyWaitersReleasesMoreWaitersThanOneBatch(t *testing.T) {
	var n wsync.Notify
	const count = 100
	hands := make([]*hand, count)
	futs := make([]*wsync.NotifiedFuture, count)
	for i := range futs {
		hands[i], futs[i] = newHand(), n.Notified()
		require.False(t, notified(hands[i], futs[i]))
	}
	n.NotifyWaiters()
	for i := range futs {
		require.True(t, hands[i].Woken(), "waiter %d", i)
		require.True(t, notified(hands[i], futs[i]))
	}
}

func TestDroppedNotifiedPassesItsNotificationOn(t *testing.T) {
	var n wsync.Notify
	a, b := newHand(), newHand()
	fa, fb := n.Notified(), n.Notified()
	require.False(t, notified(a, fa))
	require.False(t, notified(b, fb))
	n.NotifyOne()
	require.True(t, a.Woken())
	fa.Drop() // dropped at the moment it was woken
	assert.True(t, b.Woken(), "the notification passed to the next waiter")
	assert.True(t, notified(b, fb))
}

func TestDroppedNotifiedWithNobodyBehindStoresThePermit(t *testing.T) {
	var n wsync.Notify
	a := newHand()
	fa := n.Notified()
	require.False(t, notified(a, fa))
	n.NotifyOne()
	fa.Drop()
	assert.True(t, notified(newHand(), n.Notified()), "the notification became the permit")
}

func TestDroppedWaitingNotifiedIsForgotten(t *testing.T) {
	var n wsync.Notify
	a := newHand()
	fa := n.Notified()
	require.False(t, notified(a, fa))
	fa.Drop()
	n.NotifyOne()
	assert.False(t, a.Woken())
	assert.True(t, notified(newHand(), n.Notified()), "nobody waits any more: the permit is stored")
}

func TestNotifiedConsumesBudget(t *testing.T) {
	var n wsync.Notify
	var w waker
	cx := budgetContext(&w)
	var f wsync.NotifiedFuture
	count := 0
	for {
		n.NotifyOne()
		if _, ok := n.NotifiedInto(&f).Poll(cx); !ok {
			break
		}
		count++
	}
	assert.Equal(t, core.Budget, count)
	assert.True(t, w.Woken())
	f.Drop()
	assert.True(t, notified(newHand(), n.Notified()), "the refused poll did not consume the permit")
}

// TestNoNotifyOneIsLostUnderConcurrency has goroutines wait on a Notify
// and others notify one at a time, some waiters dropping their future
// mid-wait. Every NotifyOne is consumed by exactly one completed wait (or
// left as the single permit).
func TestNoNotifyOneIsLostUnderConcurrency(t *testing.T) {
	var n wsync.Notify
	const waiters, rounds = 4, 500
	var completed atomic.Int64
	var wg gosync.WaitGroup
	for g := 0; g < waiters; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var f wsync.NotifiedFuture
			h := newHand()
			for i := 0; i < rounds; i++ {
				if (i+g)%5 == 0 {
					n.NotifiedInto(&f)
					f.Poll(h.Cx)
					f.Drop()
					continue
				}
				future.Wait[core.Unit](n.NotifiedInto(&f))
				completed.Add(1)
			}
		}(g)
	}
	// Notify until every non-dropping round has completed.
	want := int64(waiters * rounds * 4 / 5)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-done:
			assert.Equal(t, want, completed.Load())
			return
		default:
			n.NotifyOne()
		}
	}
}
