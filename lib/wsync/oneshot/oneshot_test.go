package oneshot_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
	"github.com/weftrt/weft/lib/wsync/oneshot"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func recv[T any](h *polltest.Hand, rx *oneshot.Receiver[T]) (core.Result[T], bool) {
	return polltest.Poll(h, core.Future[core.Result[T]](rx.Recv()))
}

func TestValueSentBeforeRecvIsReceivedAtOnce(t *testing.T) {
	tx, rx := oneshot.New[string]()
	require.NoError(t, tx.Send("hi"))
	r, ok := recv(polltest.NewHand(), rx)
	require.True(t, ok)
	require.NoError(t, r.Err)
	assert.Equal(t, "hi", r.Value)
}

func TestSendWakesTheWaitingReceiver(t *testing.T) {
	tx, rx := oneshot.New[int]()
	h := polltest.NewHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	require.NoError(t, tx.Send(3))
	assert.True(t, h.Woken())
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.Equal(t, 3, r.Value)
}

func TestReceiverPolledByANewTaskWakesThatTask(t *testing.T) {
	tx, rx := oneshot.New[int]()
	first, second := polltest.NewHand(), polltest.NewHand()
	_, ok := recv(first, rx)
	require.False(t, ok)
	_, ok = recv(second, rx)
	require.False(t, ok)
	require.NoError(t, tx.Send(1))
	assert.False(t, first.Woken(), "the replaced waker is not woken")
	assert.True(t, second.Woken())
}

func TestClosingTheSenderWithoutSendingEndsTheReceive(t *testing.T) {
	tx, rx := oneshot.New[int]()
	h := polltest.NewHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	tx.Close()
	assert.True(t, h.Woken())
	r, ok := recv(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, oneshot.ErrClosed)
	tx.Close() // idempotent
}

func TestSendAfterTheReceiverClosedFails(t *testing.T) {
	tx, rx := oneshot.New[int]()
	rx.Close()
	assert.True(t, tx.IsClosed())
	assert.ErrorIs(t, tx.Send(1), oneshot.ErrClosed)
	_, err := rx.TryRecv()
	assert.ErrorIs(t, err, oneshot.ErrClosed)
}

func TestValueSentBeforeTheReceiverClosedCanStillBeReceived(t *testing.T) {
	tx, rx := oneshot.New[int]()
	require.NoError(t, tx.Send(9))
	rx.Close()
	v, err := rx.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 9, v)
}

func TestSecondSendPanics(t *testing.T) {
	tx, _ := oneshot.New[int]()
	require.NoError(t, tx.Send(1))
	assert.Panics(t, func() { _ = tx.Send(2) })
	tx2, _ := oneshot.New[int]()
	tx2.Close()
	assert.Panics(t, func() { _ = tx2.Send(2) })
}

func TestTryRecvReportsEmptyValueThenClosed(t *testing.T) {
	tx, rx := oneshot.New[int]()
	_, err := rx.TryRecv()
	assert.ErrorIs(t, err, oneshot.ErrEmpty)
	require.NoError(t, tx.Send(4))
	v, err := rx.TryRecv()
	require.NoError(t, err)
	assert.Equal(t, 4, v)
	_, err = rx.TryRecv()
	assert.ErrorIs(t, err, oneshot.ErrClosed, "the value was received")
}

func TestDroppedRecvLosesNothing(t *testing.T) {
	tx, rx := oneshot.New[int]()
	h := polltest.NewHand()
	_, ok := recv(h, rx)
	require.False(t, ok)
	rx.Recv().Drop()
	require.NoError(t, tx.Send(5))
	assert.False(t, h.Woken(), "the dropped receive's waker was withdrawn")
	r, ok := recv(polltest.NewHand(), rx)
	require.True(t, ok)
	assert.Equal(t, 5, r.Value)
}

func TestSenderClosedResolvesWhenTheReceiverCloses(t *testing.T) {
	tx, rx := oneshot.New[int]()
	h := polltest.NewHand()
	_, ok := polltest.Poll(h, core.Future[core.Unit](tx.Closed()))
	require.False(t, ok)
	rx.Close()
	assert.True(t, h.Woken())
	_, ok = polltest.Poll(h, core.Future[core.Unit](tx.Closed()))
	require.True(t, ok)
}

func TestRecvConsumesBudget(t *testing.T) {
	tx, rx := oneshot.New[int]()
	require.NoError(t, tx.Send(1))
	var w polltest.Waker
	cx := polltest.BudgetContext(&w)
	for i := 0; i < core.Budget; i++ {
		require.True(t, cx.Proceed())
	}
	_, ok := rx.Recv().Poll(cx)
	require.False(t, ok, "no budget left")
	assert.True(t, w.Woken())
	v, err := rx.TryRecv()
	require.NoError(t, err, "the refused receive took nothing")
	assert.Equal(t, 1, v)
}

func TestSendFromWakesTheReceiverOnTheCallingWorker(t *testing.T) {
	tx, rx := oneshot.New[int]()
	cx, sched, task := polltest.WorkerContext()
	_, ok := rx.Recv().Poll(polltest.TaskContext(cx, task))
	require.False(t, ok)
	require.NoError(t, tx.SendFrom(cx, 1))
	assert.EqualValues(t, 1, sched.Local.Load())
}

// TestSendRacingWithCloseEitherDeliversOrFails races a send on another
// goroutine with the receiver closing (every other round) and then
// receiving, many times: the send succeeds if and only if the value is
// received, and the receive always completes.
func TestSendRacingWithCloseEitherDeliversOrFails(t *testing.T) {
	for i := 0; i < 2000; i++ {
		tx, rx := oneshot.New[int]()
		var sendErr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); sendErr = tx.Send(i) }()
		if i%2 == 0 {
			rx.Close()
		}
		r := future.Wait[core.Result[int]](rx.Recv())
		wg.Wait()
		if sendErr == nil {
			require.NoError(t, r.Err, "round %d", i)
			require.Equal(t, i, r.Value)
		} else {
			require.ErrorIs(t, r.Err, oneshot.ErrClosed)
		}
	}
}

func TestNewAllocatesOnce(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		tx, rx := oneshot.New[int]()
		_ = tx.Send(1)
		_, _ = rx.TryRecv()
	})
	assert.Equal(t, 1.0, allocs)
}
