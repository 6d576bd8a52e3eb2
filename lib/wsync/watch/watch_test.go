package watch_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
	"github.com/weftrt/weft/lib/wsync/watch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func changed[T any](h *polltest.Hand, rx *watch.Receiver[T]) (error, bool) {
	return polltest.Poll(h, core.Future[error](rx.Changed()))
}

func TestReceiverStartsHavingSeenTheInitialValue(t *testing.T) {
	_, rx := watch.New(1)
	assert.Equal(t, 1, rx.Borrow())
	_, ok := changed(polltest.NewHand(), rx)
	assert.False(t, ok)
	has, err := rx.HasChanged()
	require.NoError(t, err)
	assert.False(t, has)
}

func TestChangedResolvesOnSendAndMarksTheValueSeen(t *testing.T) {
	tx, rx := watch.New("a")
	h := polltest.NewHand()
	_, ok := changed(h, rx)
	require.False(t, ok)
	require.NoError(t, tx.Send("b"))
	assert.True(t, h.Woken())
	err, ok := changed(h, rx)
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, "b", rx.Borrow())
	_, ok = changed(h, rx)
	assert.False(t, ok, "the new value was marked seen")
}

func TestReceiverSkipsIntermediateValues(t *testing.T) {
	tx, rx := watch.New(0)
	for i := 1; i <= 5; i++ {
		require.NoError(t, tx.Send(i))
	}
	err, ok := changed(polltest.NewHand(), rx)
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 5, rx.BorrowAndUpdate(), "only the latest value is kept")
}

func TestBorrowDoesNotMarkSeenButBorrowAndUpdateDoes(t *testing.T) {
	tx, rx := watch.New(0)
	require.NoError(t, tx.Send(1))
	assert.Equal(t, 1, rx.Borrow())
	has, _ := rx.HasChanged()
	assert.True(t, has)
	assert.Equal(t, 1, rx.BorrowAndUpdate())
	has, _ = rx.HasChanged()
	assert.False(t, has)
}

func TestEverySendWakesEveryWaitingReceiver(t *testing.T) {
	tx, first := watch.New(0)
	rxs := []*watch.Receiver[int]{first}
	for i := 0; i < 40; i++ {
		rxs = append(rxs, tx.Subscribe())
	}
	hands := make([]*polltest.Hand, len(rxs))
	for i, rx := range rxs {
		hands[i] = polltest.NewHand()
		_, ok := changed(hands[i], rx)
		require.False(t, ok)
	}
	require.NoError(t, tx.Send(1))
	for i, rx := range rxs {
		require.True(t, hands[i].Woken(), "receiver %d", i)
		_, ok := changed(hands[i], rx)
		require.True(t, ok)
	}
}

func TestClosingTheSenderEndsChangedAfterTheLastValue(t *testing.T) {
	tx, rx := watch.New(0)
	require.NoError(t, tx.Send(1))
	tx.Close()
	err, ok := changed(polltest.NewHand(), rx)
	require.True(t, ok)
	require.NoError(t, err, "the unseen value is reported first")
	err, ok = changed(polltest.NewHand(), rx)
	require.True(t, ok)
	assert.ErrorIs(t, err, watch.ErrClosed)
	assert.Equal(t, 1, rx.Borrow(), "the last value stays readable")
	assert.ErrorIs(t, tx.Send(2), watch.ErrClosed)
}

func TestClosingTheSenderWakesWaitingReceivers(t *testing.T) {
	tx, rx := watch.New(0)
	h := polltest.NewHand()
	_, ok := changed(h, rx)
	require.False(t, ok)
	tx.Close()
	assert.True(t, h.Woken())
	err, ok := changed(h, rx)
	require.True(t, ok)
	assert.ErrorIs(t, err, watch.ErrClosed)
}

func TestSendWithoutReceiversStoresNothingButSendReplaceDoes(t *testing.T) {
	tx, rx := watch.New(0)
	rx.Close()
	assert.ErrorIs(t, tx.Send(1), watch.ErrNoReceivers)
	assert.Equal(t, 0, tx.Borrow())
	assert.Equal(t, 0, tx.SendReplace(2))
	assert.Equal(t, 2, tx.Borrow())
	late := tx.Subscribe()
	assert.Equal(t, 2, late.Borrow())
	has, _ := late.HasChanged()
	assert.False(t, has, "a subscriber has seen the current value")
}

func TestSendModifyChangesInPlace(t *testing.T) {
	tx, rx := watch.New([]int{1})
	tx.SendModify(func(v *[]int) { *v = append(*v, 2) })
	assert.Equal(t, []int{1, 2}, rx.BorrowAndUpdate())
}

func TestCloneHasSeenWhatTheOriginalHasSeen(t *testing.T) {
	tx, rx := watch.New(0)
	require.NoError(t, tx.Send(1))
	c := rx.Clone()
	has, _ := c.HasChanged()
	assert.True(t, has)
	assert.Equal(t, 2, tx.ReceiverCount())
}

func TestDroppedChangedLosesNothing(t *testing.T) {
	tx, rx := watch.New(0)
	h := polltest.NewHand()
	_, ok := changed(h, rx)
	require.False(t, ok)
	rx.Changed().Drop()
	require.NoError(t, tx.Send(1))
	assert.False(t, h.Woken())
	_, ok = changed(polltest.NewHand(), rx)
	assert.True(t, ok, "the change is still unseen")
}

func TestChangedConsumesBudget(t *testing.T) {
	tx, rx := watch.New(0)
	var w polltest.Waker
	cx := polltest.BudgetContext(&w)
	n := 0
	for {
		require.NoError(t, tx.Send(n))
		if _, ok := rx.Changed().Poll(cx); !ok {
			break
		}
		n++
	}
	assert.Equal(t, core.Budget, n)
	assert.True(t, w.Woken())
}

// TestReceiversEventuallySeeTheLastValue has goroutines follow a watch
// channel that another goroutine updates; each ends having seen the final
// value, with the values it saw in increasing order.
func TestReceiversEventuallySeeTheLastValue(t *testing.T) {
	tx, first := watch.New(0)
	const last = 2000
	rxs := []*watch.Receiver[int]{first, tx.Subscribe(), tx.Subscribe()}
	var wg sync.WaitGroup
	for _, rx := range rxs {
		wg.Add(1)
		go func(rx *watch.Receiver[int]) {
			defer wg.Done()
			prev := 0
			for {
				if err := future.Wait[error](rx.Changed()); err != nil {
					require.ErrorIs(t, err, watch.ErrClosed)
					break
				}
				v := rx.BorrowAndUpdate()
				require.GreaterOrEqual(t, v, prev)
				prev = v
			}
			assert.Equal(t, last, prev)
		}(rx)
	}
	for i := 1; i <= last; i++ {
		require.NoError(t, tx.Send(i))
	}
	tx.Close()
	wg.Wait()
}

func TestChangedDroppedWhenWokenLeavesTheChangeUnseen(t *testing.T) {
	tx, rx := watch.New(0)
	h := polltest.NewHand()
	_, ok := changed(h, rx)
	require.False(t, ok)
	require.NoError(t, tx.Send(1))
	require.True(t, h.Woken())
	rx.Changed().Drop()
	has, err := rx.HasChanged()
	require.NoError(t, err)
	assert.True(t, has)
}
