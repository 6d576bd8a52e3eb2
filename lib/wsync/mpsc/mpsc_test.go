package mpsc_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

func TestMessagesArriveInSendOrder(t *testing.T) {
	tx, rx := mpsc.New[int](4)
	h := newHand()
	for i := 0; i < 4; i++ {
		err, ok := sendPoll(h, tx.Send(i))
		require.True(t, ok)
		require.NoError(t, err)
	}
	for i := 0; i < 4; i++ {
		r, ok := recv(h, rx)
		require.True(t, ok)
		require.NoError(t, r.Err)
		assert.Equal(t, i, r.Value)
	}
}

func TestNewPanicsOnAZeroCapacity(t *testing.T) {
	assert.Panics(t, func() { mpsc.New[int](0) })
}

func TestRecvWaitsAndIsWokenBySend(t *testing.T) {
	tx, rx := mpsc.New[string](1)
	h := newHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	require.NoError(t, tx.TrySend("x"))
	assert.True(t, h.Woken())
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.Equal(t, "x", r.Value)
}

func TestSendWaitsForCapacityAndSendersAreServedInOrder(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	require.NoError(t, tx.TrySend(0))
	hands := []*hand{newHand(), newHand(), newHand()}
	futs := make([]*mpsc.SendFuture[int], 3)
	for i := range futs {
		futs[i] = tx.Send(i + 1)
		_, ok := sendPoll(hands[i], futs[i])
		require.False(t, ok, "send %d must wait", i+1)
	}
	assert.ErrorIs(t, tx.TrySend(9), mpsc.ErrFull, "a try-send may not overtake waiting sends")
	rh := newHand()
	for i := 0; i < 3; i++ {
		r, ok := recv(rh, rx)
		require.True(t, ok)
		assert.Equal(t, i, r.Value)
		for j := range hands {
			assert.Equal(t, i == j, hands[j].Woken(), "receive %d woke sender %d", i, j)
		}
		err, ok := sendPoll(hands[i], futs[i])
		require.True(t, ok)
		require.NoError(t, err)
	}
	r, _ := recv(rh, rx)
	assert.Equal(t, 3, r.Value)
}

func TestTrySendReportsFullAndClosed(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	require.NoError(t, tx.TrySend(1))
	assert.ErrorIs(t, tx.TrySend(2), mpsc.ErrFull)
	rx.Close()
	assert.ErrorIs(t, tx.TrySend(3), mpsc.ErrClosed)
	assert.True(t, tx.IsClosed())
}

func TestTryRecvReportsEmptyThenClosed(t *testing.T) {
	tx, rx := mpsc.New[int](2)
	_, err := rx.TryRecv()
	assert.ErrorIs(t, err, mpsc.ErrEmpty)
	require.NoError(t, tx.TrySend(5))
	tx.Close()
	v, err := rx.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 5, v)
	_, err = rx.TryRecv()
	assert.ErrorIs(t, err, mpsc.ErrClosed)
}

func TestRecvEndsOnlyAfterTheLastSenderClosesAndTheBufferDrains(t *testing.T) {
	tx, rx := mpsc.New[int](4)
	tx2 := tx.Clone()
	require.NoError(t, tx.TrySend(1))
	tx.Close()
	tx.Close() // idempotent
	h := newHand()
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.Equal(t, 1, r.Value)
	_, ok = recv(h, rx)
	require.False(t, ok, "one sender handle is still open")
	require.NoError(t, tx2.TrySend(2))
	assert.True(t, h.Woken())
	r, _ = recv(h, rx)
	assert.Equal(t, 2, r.Value)
	_, ok = recv(h, rx)
	require.False(t, ok)
	tx2.Close()
	assert.True(t, h.Woken(), "closing the last sender wakes the receiver")
	r, ok = recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
	assert.True(t, rx.IsClosed())
}

func TestClosedSenderHandleCannotSendOrClone(t *testing.T) {
	tx, rx := mpsc.New[int](2)
	other := tx.Clone()
	tx.Close()
	assert.ErrorIs(t, tx.TrySend(1), mpsc.ErrClosed)
	err, ok := sendPoll(newHand(), tx.Send(1))
	require.True(t, ok)
	assert.ErrorIs(t, err, mpsc.ErrClosed)
	assert.Panics(t, func() { tx.Clone() })
	require.NoError(t, other.TrySend(2), "other handles are unaffected")
	v, _ := rx.TryRecv()
	assert.Equal(t, 2, v)
	other.Close()
}

func TestReceiverCloseFailsWaitingSendsButKeepsBufferedMessages(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	require.NoError(t, tx.TrySend(1))
	sh := newHand()
	f := tx.Send(2)
	_, ok := sendPoll(sh, f)
	require.False(t, ok)
	rx.Close()
	assert.True(t, sh.Woken())
	err, ok := sendPoll(sh, f)
	require.True(t, ok)
	assert.ErrorIs(t, err, mpsc.ErrClosed)
	h := newHand()
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.Equal(t, 1, r.Value, "the buffered message is still delivered")
	r, ok = recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}

func TestPermitReservedBeforeCloseStillDelivers(t *testing.T) {
	tx, rx := mpsc.New[int](2)
	p, err := tx.TryReserve()
	require.NoError(t, err)
	rx.Close()
	h := newHand()
	_, ok := recv(h, rx)
	require.False(t, ok, "a held permit may still become a message")
	p.Send(7)
	assert.True(t, h.Woken())
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.Equal(t, 7, r.Value)
	r, ok = recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}

func TestReleasingTheLastPermitWakesTheReceiverOfAClosedChannel(t *testing.T) {
	tx, rx := mpsc.New[int](2)
	p, err := tx.TryReserveMany(2)
	require.NoError(t, err)
	tx.Close()
	h := newHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	p.Release()
	assert.True(t, h.Woken(), "the receiver must learn the channel ended")
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}

func TestDroppedReserveWakesTheReceiverOfAClosedChannel(t *testing.T) {
	tx, rx := mpsc.New[int](2)
	p, err := tx.TryReserve()
	require.NoError(t, err)
	// A reservation of two is granted one permit and waits for the other.
	rf := tx.ReserveMany(2)
	_, ok := polltest.Poll(newHand(), core.Future[core.Result[mpsc.Permit[int]]](rf))
	require.False(t, ok)
	tx.Close()
	p.Release() // completes the reservation, which now holds both
	h := newHand()
	_, ok = recv(h, rx)
	require.False(t, ok)
	rf.Drop()
	assert.True(t, h.Woken())
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}

func TestDroppedRecvLosesNoMessage(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	h := newHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	require.NoError(t, tx.TrySend(3))
	require.True(t, h.Woken())
	rx.Recv().Drop() // abandoned at the moment it was woken
	r, ok := recv(newHand(), rx)
	require.True(t, ok)
	assert.Equal(t, 3, r.Value)
}

func TestDroppedRecvIsNotWoken(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	h := newHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	rx.Recv().Drop()
	require.NoError(t, tx.TrySend(1))
	assert.False(t, h.Woken())
}

func TestDroppedSendHasNotSentAndPassesCapacityOn(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	require.NoError(t, tx.TrySend(1))
	a, b := newHand(), newHand()
	fa, fb := tx.Send(2), tx.Send(3)
	_, ok := sendPoll(a, fa)
	require.False(t, ok)
	_, ok = sendPoll(b, fb)
	require.False(t, ok)
	r, _ := recv(newHand(), rx)
	require.Equal(t, 1, r.Value)
	require.True(t, a.Woken())
	fa.Drop() // dropped at the moment it was granted capacity
	assert.True(t, b.Woken(), "the capacity passed to the next sender")
	err, ok := sendPoll(b, fb)
	require.True(t, ok)
	require.NoError(t, err)
	r, _ = recv(newHand(), rx)
	assert.Equal(t, 3, r.Value, "the dropped send's value was never sent")
	_, err = rx.TryRecv()
	assert.ErrorIs(t, err, mpsc.ErrEmpty)
}

func TestReserveManyAtTheHeadBlocksSmallerSends(t *testing.T) {
	tx, rx := mpsc.New[int](3)
	require.NoError(t, tx.TrySend(0))
	require.NoError(t, tx.TrySend(1))
	bh, sh := newHand(), newHand()
	big := tx.ReserveMany(3)
	_, ok := polltest.Poll(bh, core.Future[core.Result[mpsc.Permit[int]]](big))
	require.False(t, ok)
	small := tx.Send(9)
	_, ok = sendPoll(sh, small)
	require.False(t, ok, "the small send waits behind the big reservation")
	rh := newHand()
	recv(rh, rx)
	assert.False(t, bh.Woken())
	recv(rh, rx)
	assert.True(t, bh.Woken())
	assert.False(t, sh.Woken())
	res, ok := polltest.Poll(bh, core.Future[core.Result[mpsc.Permit[int]]](big))
	require.True(t, ok)
	require.NoError(t, res.Err)
	p := res.Value
	assert.Equal(t, 3, p.Len())
	p.Send(10)
	p.Release()
	assert.True(t, sh.Woken())
	err, ok := sendPoll(sh, small)
	require.True(t, ok)
	require.NoError(t, err)
	r, _ := recv(rh, rx)
	assert.Equal(t, 10, r.Value)
	r, _ = recv(rh, rx)
	assert.Equal(t, 9, r.Value)
}

func TestPermitSendPanicsWhenUsedUp(t *testing.T) {
	tx, _ := mpsc.New[int](1)
	p, err := tx.TryReserve()
	require.NoError(t, err)
	p.Send(1)
	assert.Panics(t, func() { p.Send(2) })
}

func TestRecvManyTakesUpToLimit(t *testing.T) {
	tx, rx := mpsc.New[int](8)
	for i := 0; i < 5; i++ {
		require.NoError(t, tx.TrySend(i))
	}
	h := newHand()
	res, ok := polltest.Poll(h, core.Future[core.Result[[]int]](rx.RecvMany(nil, 3)))
	require.True(t, ok)
	assert.Equal(t, []int{0, 1, 2}, res.Value)
	res, ok = polltest.Poll(h, core.Future[core.Result[[]int]](rx.RecvMany(res.Value, 10)))
	require.True(t, ok)
	assert.Equal(t, []int{0, 1, 2, 3, 4}, res.Value)
	assert.Equal(t, 8, tx.Capacity(), "every slot was given back")
	tx.Close()
	res, ok = polltest.Poll(h, core.Future[core.Result[[]int]](rx.RecvMany(nil, 10)))
	require.True(t, ok)
	assert.ErrorIs(t, res.Err, mpsc.ErrClosed)
	assert.Empty(t, res.Value)
}

func TestRecvManyWakesEverySenderItMakesRoomFor(t *testing.T) {
	const n = 40 // more than one batch of wakes
	tx, rx := mpsc.New[int](n)
	for i := 0; i < n; i++ {
		require.NoError(t, tx.TrySend(i))
	}
	hands := make([]*hand, n)
	futs := make([]*mpsc.SendFuture[int], n)
	for i := range futs {
		hands[i], futs[i] = newHand(), tx.Send(n+i)
		_, ok := sendPoll(hands[i], futs[i])
		require.False(t, ok)
	}
	res, ok := polltest.Poll(newHand(), core.Future[core.Result[[]int]](rx.RecvMany(nil, n)))
	require.True(t, ok)
	require.Len(t, res.Value, n)
	for i := range futs {
		require.True(t, hands[i].Woken(), "sender %d", i)
		err, ok := sendPoll(hands[i], futs[i])
		require.True(t, ok)
		require.NoError(t, err)
	}
}

func TestRecvManyWithZeroLimitResolvesAtOnce(t *testing.T) {
	_, rx := mpsc.New[int](1)
	res, ok := polltest.Poll(newHand(), core.Future[core.Result[[]int]](rx.RecvMany(nil, 0)))
	require.True(t, ok)
	assert.NoError(t, res.Err)
}

func TestRecvConsumesBudgetSoALoopYieldsAfterBudgetMessages(t *testing.T) {
	tx, rx := mpsc.NewUnbounded[int]()
	for i := 0; i < 2*core.Budget; i++ {
		require.NoError(t, tx.Send(i))
	}
	var w polltest.Waker
	cx := polltest.BudgetContext(&w)
	n := 0
	for {
		if _, ok := rx.Recv().Poll(cx); !ok {
			break
		}
		n++
	}
	assert.Equal(t, core.Budget, n)
	assert.True(t, w.Woken(), "the spent budget woke the task")
	assert.Equal(t, core.Budget, rx.Len(), "the refused receive took nothing")
}

func TestSendConsumesBudget(t *testing.T) {
	tx, rx := mpsc.New[int](4 * core.Budget)
	var w polltest.Waker
	cx := polltest.BudgetContext(&w)
	var f mpsc.SendFuture[int]
	n := 0
	for {
		if _, ok := tx.SendInto(&f, n).Poll(cx); !ok {
			break
		}
		n++
	}
	assert.Equal(t, core.Budget, n)
	assert.True(t, w.Woken())
	f.Drop()
	assert.Equal(t, core.Budget, rx.Len(), "the refused send sent nothing")
	assert.Equal(t, 3*core.Budget, tx.Capacity(), "and holds no capacity")
}

func TestSendWakesTheReceiverOnTheCallingWorker(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	cx, sched, task := polltest.WorkerContext()
	_, ok := rx.Recv().Poll(polltest.TaskContext(cx, task))
	require.False(t, ok)
	err, ok := tx.Send(1).Poll(cx)
	require.True(t, ok)
	require.NoError(t, err)
	assert.EqualValues(t, 1, sched.Local.Load())
	assert.EqualValues(t, 0, sched.Remote.Load())
}

func TestRecvHandsCapacityToTheWaitingSenderOnTheCallingWorker(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	require.NoError(t, tx.TrySend(0))
	cx, sched, task := polltest.WorkerContext()
	f := tx.Send(1)
	_, ok := f.Poll(polltest.TaskContext(cx, task))
	require.False(t, ok)
	_, ok = rx.Recv().Poll(cx)
	require.True(t, ok)
	assert.EqualValues(t, 1, sched.Local.Load())
	f.Drop()
}

func TestTrySendFromAGoroutineIsARemoteWake(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	cx, sched, task := polltest.WorkerContext()
	_, ok := rx.Recv().Poll(polltest.TaskContext(cx, task))
	require.False(t, ok)
	require.NoError(t, tx.TrySend(1))
	assert.EqualValues(t, 0, sched.Local.Load())
	assert.EqualValues(t, 1, sched.Remote.Load())
}

func TestSendIntoAndRecvAllocateNothing(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	h := newHand()
	var f mpsc.SendFuture[int]
	allocs := testing.AllocsPerRun(100, func() {
		tx.SendInto(&f, 1).Poll(h.Cx)
		rx.Recv().Poll(h.Cx)
	})
	assert.Zero(t, allocs)
}

func TestUnboundedSendNeverWaitsAndEndsWhenClosed(t *testing.T) {
	tx, rx := mpsc.NewUnbounded[int]()
	const n = 5000
	for i := 0; i < n; i++ {
		require.NoError(t, tx.Send(i))
	}
	tx2 := tx.Clone()
	tx.Close()
	require.NoError(t, tx2.Send(n))
	tx2.Close()
	assert.ErrorIs(t, tx2.Send(0), mpsc.ErrClosed)
	h := newHand()
	for i := 0; i <= n; i++ {
		r, ok := recv(h, rx)
		require.True(t, ok)
		require.Equal(t, i, r.Value)
	}
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}

func TestUnboundedSendFailsAfterTheReceiverCloses(t *testing.T) {
	tx, rx := mpsc.NewUnbounded[int]()
	require.NoError(t, tx.Send(1))
	rx.Close()
	assert.True(t, tx.IsClosed())
	assert.ErrorIs(t, tx.Send(2), mpsc.ErrClosed)
	v, err := rx.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	_, err = rx.TryRecv()
	assert.ErrorIs(t, err, mpsc.ErrClosed)
}

// TestConcurrentProducersDeliverEveryMessageInPerProducerOrder runs
// goroutine producers, some dropping sends half way, against one
// consumer. Every message whose send completed arrives exactly once and
// each producer's messages arrive in order.
func TestConcurrentProducersDeliverEveryMessageInPerProducerOrder(t *testing.T) {
	const producers, per = 6, 2000
	tx, rx := mpsc.New[[2]int](8)
	sent := make([][]int, producers)
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		ptx := tx.Clone()
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			defer ptx.Close()
			h := newHand()
			var f mpsc.SendFuture[[2]int]
			for i := 0; i < per; i++ {
				msg := [2]int{p, i}
				if i%7 == 3 {
					// Give up after one poll; the message may or may
					// not have gone out.
					ptx.SendInto(&f, msg)
					if err, ok := f.Poll(h.Cx); ok {
						require.NoError(t, err)
						sent[p] = append(sent[p], i)
					} else {
						f.Drop()
					}
					continue
				}
				require.NoError(t, future.Wait[error](ptx.SendInto(&f, msg)))
				sent[p] = append(sent[p], i)
			}
		}(p)
	}
	tx.Close()
	got := make([][]int, producers)
	for {
		r := future.Wait[core.Result[[2]int]](rx.Recv())
		if r.Err != nil {
			require.ErrorIs(t, r.Err, mpsc.ErrClosed)
			break
		}
		got[r.Value[0]] = append(got[r.Value[0]], r.Value[1])
	}
	wg.Wait()
	for p := range got {
		assert.Equal(t, sent[p], got[p], fmt.Sprintf("producer %d", p))
	}
}

func TestSendStartedAfterTheLastHandleClosedFails(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	f := tx.Send(1)
	tx.Close()
	err, ok := sendPoll(newHand(), f)
	require.True(t, ok)
	assert.ErrorIs(t, err, mpsc.ErrClosed)
	r, ok := recv(newHand(), rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}

func TestSendQueuedBeforeTheLastHandleClosedStillDelivers(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	require.NoError(t, tx.TrySend(1))
	sh := newHand()
	f := tx.Send(2)
	_, ok := sendPoll(sh, f)
	require.False(t, ok)
	tx.Close()
	h := newHand()
	r, _ := recv(h, rx)
	require.Equal(t, 1, r.Value)
	_, ok = recv(h, rx)
	require.False(t, ok, "the queued send may still deliver")
	err, ok := sendPoll(sh, f)
	require.True(t, ok)
	require.NoError(t, err)
	assert.True(t, h.Woken())
	r, _ = recv(h, rx)
	assert.Equal(t, 2, r.Value)
	r, ok = recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}

func TestQueuedSendDroppedAfterTheLastHandleClosedEndsTheChannel(t *testing.T) {
	tx, rx := mpsc.New[int](1)
	require.NoError(t, tx.TrySend(1))
	f := tx.Send(2)
	_, ok := sendPoll(newHand(), f)
	require.False(t, ok)
	tx.Close()
	h := newHand()
	recv(h, rx)
	_, ok = recv(h, rx)
	require.False(t, ok)
	f.Drop()
	assert.True(t, h.Woken())
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, mpsc.ErrClosed)
}
