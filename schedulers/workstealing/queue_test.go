package workstealing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// newTasks returns n unbound tasks; the queues only move pointers, so the
// tasks never run.
func newTasks(n int) []*core.Task {
	ts := make([]*core.Task, n)
	for i := range ts {
		ts[i], _ = core.NewTask(core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { return 0, true })))
	}
	return ts
}

// recorder is an overflow that keeps what it is given, one entry per
// call.
type recorder struct {
	calls [][]*core.Task
}

func (r *recorder) overflowOne(t *core.Task) { r.calls = append(r.calls, []*core.Task{t}) }

func (r *recorder) overflowBatch(b *core.TaskQueue) {
	var ts []*core.Task
	for t := b.Pop(); t != nil; t = b.Pop() {
		ts = append(ts, t)
	}
	r.calls = append(r.calls, ts)
}

// noOverflow fails the test if anything overflows.
type noOverflow struct{ t *testing.T }

func (o noOverflow) overflowOne(*core.Task)        { o.t.Fatal("unexpected overflow") }
func (o noOverflow) overflowBatch(*core.TaskQueue) { o.t.Fatal("unexpected overflow") }

func fill(t *testing.T, q *localQueue, ts []*core.Task) {
	t.Helper()
	for _, x := range ts {
		require.Equal(t, pushedLocal, q.push(x, noOverflow{t}))
	}
}

func drain(q *localQueue) []*core.Task {
	out := []*core.Task{}
	for t := q.pop(); t != nil; t = q.pop() {
		out = append(out, t)
	}
	return out
}

func TestPopReturnsTasksInTheOrderTheyWerePushed(t *testing.T) {
	var q localQueue
	ts := newTasks(10)
	fill(t, &q, ts)
	assert.Equal(t, 10, q.len())
	assert.Equal(t, ts, drain(&q))
	assert.True(t, q.isEmpty())
	assert.Nil(t, q.pop())
}

func TestTheQueueWrapsAroundItsRingIndefinitely(t *testing.T) {
	var q localQueue
	ts := newTasks(3)
	for i := 0; i < 3*queueCapacity; i++ {
		fill(t, &q, ts)
		require.Equal(t, ts, drain(&q))
	}
}

func TestOverflowMovesTheNewestHalfAndTheNewTaskToTheGlobalQueueInOneBatch(t *testing.T) {
	var q localQueue
	ts := newTasks(queueCapacity + 1)
	fill(t, &q, ts[:queueCapacity])
	var rec recorder
	assert.Equal(t, pushedOverflow, q.push(ts[queueCapacity], &rec))
	require.Len(t, rec.calls, 1, "one batch")
	assert.Equal(t, ts[queueHalf:], rec.calls[0], "the newest half, then the new task, in order")
	assert.Equal(t, ts[:queueHalf], drain(&q), "the oldest half stays, in order")
}

func TestOverflowKeepsTasksPulledFromTheGlobalQueueUntilTheyRun(t *testing.T) {
	// A worker pulls at most half a ring into its queue; whatever it
	// pushes afterwards overflows before the pulled tasks do.
	var q localQueue
	var global injectQueue
	pulled := newTasks(queueHalf + 1)
	for _, x := range pulled {
		global.push(x)
	}
	require.Same(t, pulled[0], global.popInto(queueHalf+1, &q), "the first runs at once")
	pulled = pulled[1:]
	var rec recorder
	for _, x := range newTasks(queueCapacity) {
		q.push(x, &rec)
	}
	require.NotEmpty(t, rec.calls)
	for _, c := range rec.calls {
		for _, x := range c {
			assert.NotContains(t, pulled, x)
		}
	}
	assert.Equal(t, pulled, drain(&q)[:queueHalf])
}

func TestPushAfterAnOverflowUsesTheFreedHalf(t *testing.T) {
	var q localQueue
	ts := newTasks(queueCapacity + 1 + queueHalf)
	fill(t, &q, ts[:queueCapacity])
	var rec recorder
	q.push(ts[queueCapacity], &rec)
	fill(t, &q, ts[queueCapacity+1:])
	assert.Equal(t, queueCapacity, q.len())
	want := append(append([]*core.Task{}, ts[:queueHalf]...), ts[queueCapacity+1:]...)
	assert.Equal(t, want, drain(&q))
}

func TestStealTakesHalfRoundedUpAndReturnsTheLastItTook(t *testing.T) {
	for _, tc := range []struct{ have, take int }{{1, 1}, {2, 1}, {3, 2}, {5, 3}, {256, 128}} {
		var src, dst localQueue
		ts := newTasks(tc.have)
		fill(t, &src, ts)
		got, n := src.stealInto(&dst)
		require.Equal(t, tc.take, n, "stealing from %d", tc.have)
		assert.Same(t, ts[tc.take-1], got, "the last task taken runs now")
		assert.Equal(t, ts[:tc.take-1], drain(&dst), "the others, oldest first, go to the thief's queue")
		assert.Equal(t, ts[tc.take:], drain(&src), "the victim keeps the newest")
	}
}

func TestStealFromAnEmptyQueueTakesNothing(t *testing.T) {
	var src, dst localQueue
	got, n := src.stealInto(&dst)
	assert.Nil(t, got)
	assert.Zero(t, n)
}

func TestStealRefusesWhenTheDestinationIsMoreThanHalfFull(t *testing.T) {
	var src, dst localQueue
	fill(t, &src, newTasks(10))
	fill(t, &dst, newTasks(queueHalf+1))
	got, n := src.stealInto(&dst)
	assert.Nil(t, got)
	assert.Zero(t, n)
	assert.Equal(t, 10, src.len())

	// Exactly half full is still allowed.
	dst.pop()
	got, n = src.stealInto(&dst)
	assert.NotNil(t, got)
	assert.Equal(t, 5, n)
}

func TestAThiefBacksOffWhileAnotherHoldsAClaim(t *testing.T) {
	var src, dst localQueue
	fill(t, &src, newTasks(8))
	first, n := src.claim()
	require.Equal(t, uint32(4), n)
	got, k := src.stealInto(&dst)
	assert.Nil(t, got, "a second thief gives up at once")
	assert.Zero(t, k)
	src.release(first)
	got, k = src.stealInto(&dst)
	assert.NotNil(t, got, "after the release, stealing works again")
	assert.Equal(t, 2, k)
}

func TestPushWhileAThiefHoldsAClaimSendsOnlyTheNewTaskToTheGlobalQueue(t *testing.T) {
	var q localQueue
	ts := newTasks(queueCapacity + 1)
	fill(t, &q, ts[:queueCapacity])
	first, n := q.claim()
	require.Equal(t, uint32(queueHalf), n)
	// The owner pops past the claim: the claimed slots stay unusable until
	// the thief releases them, so the ring still counts as full.
	popped := q.pop()
	assert.Same(t, ts[queueHalf], popped)
	var rec recorder
	require.Equal(t, pushedAroundClaim, q.push(ts[queueCapacity], &rec))
	require.Len(t, rec.calls, 1)
	assert.Equal(t, []*core.Task{ts[queueCapacity]}, rec.calls[0], "only the new task")
	// The thief finishes: it had claimed the oldest half.
	for i := uint32(0); i < n; i++ {
		assert.Same(t, ts[i], q.buf[(first+i)&queueMask])
	}
	q.release(first)
	assert.Equal(t, ts[queueHalf+1:queueCapacity], drain(&q), "the rest is untouched")
}

func TestPopDuringAClaimTakesTheTasksAfterTheClaimedOnes(t *testing.T) {
	var q localQueue
	ts := newTasks(6)
	fill(t, &q, ts)
	first, n := q.claim()
	require.Equal(t, uint32(3), n)
	assert.Equal(t, 3, q.len(), "claimed tasks are no longer queued")
	assert.Equal(t, ts[3:], drain(&q))
	q.release(first)
	assert.True(t, q.isEmpty())
	assert.Equal(t, queueCapacity, q.remaining(), "every slot is free again")
}

func TestRemainingCountsClaimedSlotsAsTaken(t *testing.T) {
	var q localQueue
	fill(t, &q, newTasks(10))
	first, _ := q.claim()
	q.pop()
	assert.Equal(t, queueCapacity-10, q.remaining())
	q.release(first)
	assert.Equal(t, queueCapacity-4, q.remaining())
}

func TestSlotsAreClearedWhenTheirTaskLeaves(t *testing.T) {
	var q, dst localQueue
	fill(t, &q, newTasks(queueCapacity))
	var rec recorder
	q.push(newTasks(1)[0], &rec)
	q.stealInto(&dst)
	drain(&q)
	drain(&dst)
	for i := range q.buf {
		require.Nil(t, q.buf[i], "slot %d of the victim", i)
		require.Nil(t, dst.buf[i], "slot %d of the thief", i)
	}
}
