package broadcast_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/broadcast"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func recv[T any](h *polltest.Hand, rx *broadcast.Receiver[T]) (core.Result[T], bool) {
	return polltest.Poll(h, core.Future[core.Result[T]](rx.Recv()))
}

func TestEveryReceiverSeesEveryMessage(t *testing.T) {
	tx, a := broadcast.New[int](4)
	b := tx.Subscribe()
	for i := 0; i < 3; i++ {
		n, err := tx.Send(i)
		require.NoError(t, err)
		assert.Equal(t, 2, n)
	}
	for _, rx := range []*broadcast.Receiver[int]{a, b} {
		for i := 0; i < 3; i++ {
			r, ok := recv(polltest.NewHand(), rx)
			require.True(t, ok)
			require.NoError(t, r.Err)
			assert.Equal(t, i, r.Value)
		}
	}
}

func TestSubscriberSeesOnlyLaterMessages(t *testing.T) {
	tx, a := broadcast.New[int](4)
	_, _ = tx.Send(1)
	b := tx.Subscribe()
	_, _ = tx.Send(2)
	v, err := b.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 2, v)
	_, err = b.TryRecv()
	assert.ErrorIs(t, err, broadcast.ErrEmpty)
	assert.Equal(t, 2, a.Len())
}

func TestLaggingReceiverGetsTheNumberOfMissedMessages(t *testing.T) {
	tx, rx := broadcast.New[int](4)
	for i := 0; i < 10; i++ {
		_, _ = tx.Send(i)
	}
	assert.Equal(t, 4, rx.Len())
	_, err := rx.TryRecv()
	var lag broadcast.LaggedError
	require.True(t, errors.As(err, &lag), "got %v", err)
	assert.EqualValues(t, 6, lag.Missed)
	for i := 6; i < 10; i++ {
		v, err := rx.TryRecv()
		require.NoError(t, err)
		assert.Equal(t, i, v, "the receiver continues with the oldest message kept")
	}
}

func TestCapacityIsRoundedUpToAPowerOfTwo(t *testing.T) {
	tx, rx := broadcast.New[int](3)
	for i := 0; i < 4; i++ {
		_, _ = tx.Send(i)
	}
	v, err := rx.TryRecv()
	require.NoError(t, err, "four messages fit")
	assert.Equal(t, 0, v)
}

func TestRecvWaitsAndEverySendWakesEveryWaiter(t *testing.T) {
	tx, a := broadcast.New[string](2)
	b := tx.Subscribe()
	ha, hb := polltest.NewHand(), polltest.NewHand()
	_, ok := recv(ha, a)
	require.False(t, ok)
	_, ok = recv(hb, b)
	require.False(t, ok)
	_, _ = tx.Send("x")
	assert.True(t, ha.Woken())
	assert.True(t, hb.Woken())
	r, _ := recv(ha, a)
	assert.Equal(t, "x", r.Value)
	r, _ = recv(hb, b)
	assert.Equal(t, "x", r.Value)
}

func TestSendWakesMoreWaitersThanOneBatch(t *testing.T) {
	tx, first := broadcast.New[int](1)
	rxs := []*broadcast.Receiver[int]{first}
	for i := 0; i < 40; i++ {
		rxs = append(rxs, tx.Subscribe())
	}
	hands := make([]*polltest.Hand, len(rxs))
	for i, rx := range rxs {
		hands[i] = polltest.NewHand()
		_, ok := recv(hands[i], rx)
		require.False(t, ok)
	}
	_, _ = tx.Send(5)
	for i, rx := range rxs {
		require.True(t, hands[i].Woken(), "receiver %d", i)
		r, ok := recv(hands[i], rx)
		require.True(t, ok)
		assert.Equal(t, 5, r.Value)
	}
}

func TestReceiversEndAfterTheLastSenderClosesAndTheyReadTheRest(t *testing.T) {
	tx, rx := broadcast.New[int](4)
	tx2 := tx.Clone()
	_, _ = tx.Send(1)
	tx.Close()
	h := polltest.NewHand()
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.Equal(t, 1, r.Value)
	_, ok = recv(h, rx)
	require.False(t, ok, "one sender remains")
	tx2.Close()
	assert.True(t, h.Woken())
	r, ok = recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, broadcast.ErrClosed)
	_, err := tx.Send(2)
	assert.ErrorIs(t, err, broadcast.ErrClosed)
}

func TestSendWithoutReceiversFails(t *testing.T) {
	tx, rx := broadcast.New[int](2)
	rx.Close()
	_, err := tx.Send(1)
	assert.ErrorIs(t, err, broadcast.ErrNoReceivers)
	assert.Equal(t, 0, tx.ReceiverCount())
	late := tx.Subscribe()
	n, err := tx.Send(2)
	require.NoError(t, err)
	assert.Equal(t, 1, n)
	v, _ := late.TryRecv()
	assert.Equal(t, 2, v)
}

func TestDroppedRecvLosesNothingAndIsNotWoken(t *testing.T) {
	tx, rx := broadcast.New[int](2)
	h := polltest.NewHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	rx.Recv().Drop()
	_, _ = tx.Send(1)
	assert.False(t, h.Woken())
	r, ok := recv(polltest.NewHand(), rx)
	require.True(t, ok)
	assert.Equal(t, 1, r.Value)
}

func TestRecvConsumesBudget(t *testing.T) {
	tx, rx := broadcast.New[int](256)
	for i := 0; i < 200; i++ {
		_, _ = tx.Send(i)
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
	assert.True(t, w.Woken())
	assert.Equal(t, 200-core.Budget, rx.Len())
}

func TestResubscribeStartsAtTheTail(t *testing.T) {
	tx, rx := broadcast.New[int](2)
	_, _ = tx.Send(1)
	rx2 := rx.Resubscribe()
	assert.Equal(t, 0, rx2.Len())
	assert.Equal(t, 2, tx.ReceiverCount())
}

// TestConcurrentSendersAndReceiversAgreeOnOrder runs sending goroutines
// and receiving goroutines with a ring large enough never to lag: every
// receiver sees every message, and all of them in the same order.
func TestConcurrentSendersAndReceiversAgreeOnOrder(t *testing.T) {
	const senders, per, receivers = 3, 300, 3
	tx, first := broadcast.New[int](senders * per)
	rxs := []*broadcast.Receiver[int]{first}
	for i := 1; i < receivers; i++ {
		rxs = append(rxs, tx.Subscribe())
	}
	got := make([][]int, receivers)
	var wg sync.WaitGroup
	for i, rx := range rxs {
		wg.Add(1)
		go func(i int, rx *broadcast.Receiver[int]) {
			defer wg.Done()
			for {
				r := future.Wait[core.Result[int]](rx.Recv())
				if r.Err != nil {
					require.ErrorIs(t, r.Err, broadcast.ErrClosed)
					return
				}
				got[i] = append(got[i], r.Value)
			}
		}(i, rx)
	}
	var sw sync.WaitGroup
	for s := 0; s < senders; s++ {
		stx := tx.Clone()
		sw.Add(1)
		go func(s int) {
			defer sw.Done()
			defer stx.Close()
			for i := 0; i < per; i++ {
				_, err := stx.Send(s*per + i)
				require.NoError(t, err)
			}
		}(s)
	}
	tx.Close()
	sw.Wait()
	wg.Wait()
	for i := range got {
		require.Len(t, got[i], senders*per)
		assert.Equal(t, got[0], got[i], "receiver %d saw another order", i)
	}
}

func TestRecvDroppedWhenWokenLosesNothing(t *testing.T) {
	tx, rx := broadcast.New[int](2)
	h := polltest.NewHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	_, _ = tx.Send(7)
	require.True(t, h.Woken())
	rx.Recv().Drop()
	r, ok := recv(polltest.NewHand(), rx)
	require.True(t, ok)
	assert.Equal(t, 7, r.Value)
}
