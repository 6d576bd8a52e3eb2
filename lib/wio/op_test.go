package wio_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
)

// armStream is a Reader and Writer whose futures resolve on their second
// poll (the first reports pending, after waking the task) with the whole
// buffer, and can be re-armed unless noRearm is set. It keeps every
// future it made.
type armStream struct {
	noRearm bool
	made    []*armOp
}

func (s *armStream) Read(p []byte) core.Future[core.Result[int]] {
	o := &armOp{s: s, p: p}
	s.made = append(s.made, o)
	return o
}

func (s *armStream) Write(p []byte) core.Future[core.Result[int]] { return s.Read(p) }

type armOp struct {
	s              *armStream
	p              []byte
	polls          int
	done, dropped  bool
	rearms, filled int
}

func (o *armOp) Poll(cx *core.Context) (core.Result[int], bool) {
	if o.done {
		panic("armOp polled after it resolved")
	}
	if o.polls++; o.polls == 1 {
		cx.Waker().Wake()
		return core.Result[int]{}, false
	}
	o.done = true
	o.filled++
	return core.Result[int]{Value: len(o.p)}, true
}

func (o *armOp) Drop() { o.dropped = true }

func (o *armOp) Rearm(p []byte) bool {
	if o.s.noRearm || !o.done {
		return false
	}
	o.p, o.done, o.polls = p, false, 0
	o.rearms++
	return true
}

// opTransfer runs one transfer of op to completion with a counting waker.
func opTransfer(t *testing.T, op *wio.Op, p []byte) int {
	t.Helper()
	w := &counter{}
	cx := core.NewContext(w)
	for polls := 1; ; polls++ {
		n, err, ok := op.Poll(cx, p)
		require.NoError(t, err)
		if ok {
			return n
		}
		require.True(t, op.Pending())
		require.Equal(t, polls, w.get(), "a pending transfer arranged a wake")
	}
}

func TestAnOpReusesOneFutureForEveryTransferWhenItRearms(t *testing.T) {
	s := &armStream{}
	op := wio.ReadOp(s)
	for i := 1; i <= 5; i++ {
		assert.Equal(t, i, opTransfer(t, &op, make([]byte, i)))
		assert.False(t, op.Pending())
	}
	require.Len(t, s.made, 1, "one future for all the transfers")
	assert.Equal(t, 4, s.made[0].rearms)
}

func TestAnOpMakesAFutureForEachTransferWhenItsFuturesCannotRearm(t *testing.T) {
	s := &armStream{noRearm: true}
	op := wio.WriteOp(s)
	for i := 1; i <= 3; i++ {
		assert.Equal(t, i, opTransfer(t, &op, make([]byte, i)))
	}
	assert.Len(t, s.made, 3)
}

func TestCancellingAPendingOpDropsItsFutureAndTheNextTransferStartsAnew(t *testing.T) {
	s := &armStream{}
	op := wio.ReadOp(s)
	_, _, ok := op.Poll(core.NewContext(nil), make([]byte, 4))
	require.False(t, ok)
	op.Cancel()
	assert.False(t, op.Pending())
	require.Len(t, s.made, 1)
	assert.True(t, s.made[0].dropped)
	op.Cancel() // nothing pending: nothing happens
	assert.Equal(t, 2, opTransfer(t, &op, make([]byte, 2)))
	require.Len(t, s.made, 2, "a dropped future is never re-armed")
	assert.Zero(t, s.made[1].rearms)
}

func TestTwoOpsOnOneReaderNeverShareAFuture(t *testing.T) {
	s := &armStream{}
	a, b := wio.ReadOp(s), wio.ReadOp(s)
	pa, pb := make([]byte, 3), make([]byte, 5)
	cx := core.NewContext(nil)
	// Both pending at once, then both complete, twice over.
	for range 2 {
		_, _, okA := a.Poll(cx, pa)
		_, _, okB := b.Poll(cx, pb)
		require.False(t, okA || okB)
		na, _, okA := a.Poll(cx, pa)
		nb, _, okB := b.Poll(cx, pb)
		require.True(t, okA && okB)
		assert.Equal(t, []int{3, 5}, []int{na, nb})
	}
	require.Len(t, s.made, 2)
	assert.Equal(t, []int{2, 2}, []int{s.made[0].filled, s.made[1].filled})
}

func TestTwoCopiesFromOneReaderEachKeepTheirOwnRead(t *testing.T) {
	src := &stuckStream{}
	c1, c2 := wio.Copy(&script{}, src), wio.Copy(&script{}, src)
	_, ok1 := pollOnce(c1, core.NoopWaker)
	_, ok2 := pollOnce(c2, core.NoopWaker)
	require.False(t, ok1 || ok2)
	core.Drop(c1)
	assert.Equal(t, 1, src.droppedReads, "dropping one copy drops its read only")
	core.Drop(c2)
	assert.Equal(t, 2, src.droppedReads)
}

// opStream is a Writer whose Write returns the one stoppableOp it holds.
type opStream struct{ op *stoppableOp }

func (s opStream) Write([]byte) core.Future[core.Result[int]] { return s.op }

func TestStoppingAnOpWhoseWriteIsACancellerKeepsItPendingForWhatItWrote(t *testing.T) {
	w := &stoppableOp{cancellable: true}
	op := wio.WriteOp(opStream{w})
	cx := core.NewContext(nil)
	p := make([]byte, 8)
	_, _, ok := op.Poll(cx, p)
	require.False(t, ok)
	require.True(t, op.Stop(), "a cancelled write is to be polled on")
	assert.True(t, op.Pending())
	assert.Equal(t, []int{1, 0}, []int{w.cancels, w.dropped}, "cancels, drops")
	// The write had sent 5 bytes when the cancel reached it.
	w.finish(5, nil)
	n, err, ok := op.Poll(cx, p)
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 5, n)
	assert.False(t, op.Pending())
	assert.Zero(t, w.dropped)
}

func TestStoppingAnOpWhoseOperationNeedsNoCancelDropsIt(t *testing.T) {
	w := &stoppableOp{cancellable: false}
	op := wio.WriteOp(opStream{w})
	_, _, ok := op.Poll(core.NewContext(nil), make([]byte, 8))
	require.False(t, ok)
	assert.False(t, op.Stop())
	assert.False(t, op.Pending())
	assert.Equal(t, []int{1, 1}, []int{w.cancels, w.dropped}, "cancels, drops")
}

func TestStoppingAnOpWithNothingPendingDoesNothing(t *testing.T) {
	w := &stoppableOp{cancellable: true}
	op := wio.WriteOp(opStream{w})
	assert.False(t, op.Stop())
	assert.Equal(t, []int{0, 0}, []int{w.cancels, w.dropped}, "cancels, drops")
}
