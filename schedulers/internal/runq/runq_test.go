package runq_test

import (
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/runq"
	"github.com/weftrt/weft/schedulers/internal/schedtest"
)

func TestPopReturnsTasksInTheOrderTheyWerePushed(t *testing.T) {
	for _, exclusive := range []bool{false, true} {
		var q runq.Queue
		if exclusive {
			q.SetExclusive()
		}
		ts := schedtest.Tasks(10)
		schedtest.Fill(t, &q, ts)
		if q.Len() != 10 {
			t.Fatalf("exclusive=%v: Len %d, want 10", exclusive, q.Len())
		}
		same(t, "popped", ts, schedtest.Drain(&q))
		if !q.IsEmpty() || q.Pop() != nil {
			t.Fatalf("exclusive=%v: the drained queue is not empty", exclusive)
		}
	}
}

func TestPushReportsTheLengthAfterThePush(t *testing.T) {
	var q runq.Queue
	for i, x := range schedtest.Tasks(5) {
		if res, n := q.Push(x, schedtest.NoOverflow{T: t}); res != runq.Queued || n != i+1 {
			t.Fatalf("push %d: %v with length %d, want Queued with %d", i, res, n, i+1)
		}
	}
	q.Pop()
	if _, n := q.Push(schedtest.Tasks(1)[0], schedtest.NoOverflow{T: t}); n != 5 {
		t.Fatalf("after a pop the push reports length %d, want 5", n)
	}
}

func TestTheQueueWrapsAroundItsRingIndefinitely(t *testing.T) {
	var q runq.Queue
	ts := schedtest.Tasks(3)
	for i := 0; i < 3*runq.Capacity; i++ {
		schedtest.Fill(t, &q, ts)
		same(t, "round", ts, schedtest.Drain(&q))
	}
}

func TestOverflowMovesTheNewestHalfAndTheNewTaskToTheOverflowInOneBatch(t *testing.T) {
	var q runq.Queue
	ts := schedtest.Tasks(runq.Capacity + 1)
	schedtest.Fill(t, &q, ts[:runq.Capacity])
	var rec schedtest.Recorder
	if res, n := q.Push(ts[runq.Capacity], &rec); res != runq.Overflowed || n != runq.Half {
		t.Fatalf("push into a full ring: %v with length %d, want Overflowed with %d", res, n, runq.Half)
	}
	if len(rec.Calls) != 1 {
		t.Fatalf("%d overflow calls, want one batch", len(rec.Calls))
	}
	same(t, "the newest half, then the new task, in order", ts[runq.Half:], rec.Calls[0])
	same(t, "the oldest half stays, in order", ts[:runq.Half], schedtest.Drain(&q))
}

func TestPushAfterAnOverflowUsesTheFreedHalf(t *testing.T) {
	var q runq.Queue
	ts := schedtest.Tasks(runq.Capacity + 1 + runq.Half)
	schedtest.Fill(t, &q, ts[:runq.Capacity])
	var rec schedtest.Recorder
	q.Push(ts[runq.Capacity], &rec)
	schedtest.Fill(t, &q, ts[runq.Capacity+1:])
	if q.Len() != runq.Capacity {
		t.Fatalf("Len %d, want a full ring", q.Len())
	}
	want := append(append([]*core.Task{}, ts[:runq.Half]...), ts[runq.Capacity+1:]...)
	same(t, "the kept half, then the new pushes", want, schedtest.Drain(&q))
}

func TestPushBatchQueuesInOrderAndOverflowsWhatDoesNotFit(t *testing.T) {
	var q runq.Queue
	ts := schedtest.Tasks(runq.Capacity + 10)
	schedtest.Fill(t, &q, ts[:runq.Capacity-5])
	var b core.TaskQueue
	for _, x := range ts[runq.Capacity-5:] {
		b.Push(x)
	}
	var rec schedtest.Recorder
	if n := q.PushBatch(&b, &rec); n != 1 {
		t.Fatalf("%d overflows, want 1 (five fit, the sixth overflows, the rest fit again)", n)
	}
	if b.Len() != 0 {
		t.Fatalf("the batch keeps %d tasks", b.Len())
	}
	// The ring filled up at the sixth task, whose push moved the newest
	// half and itself out; the last nine went into the freed half.
	same(t, "overflowed", ts[runq.Half:runq.Capacity+1], rec.All())
	want := append(append([]*core.Task{}, ts[:runq.Half]...), ts[runq.Capacity+1:]...)
	same(t, "queued", want, schedtest.Drain(&q))
}

func TestStealHalfUpTakesHalfRoundedUpAndReturnsTheNewestItTook(t *testing.T) {
	for _, tc := range []struct{ have, take int }{{1, 1}, {2, 1}, {3, 2}, {5, 3}, {256, 128}} {
		var src, dst runq.Queue
		ts := schedtest.Tasks(tc.have)
		schedtest.Fill(t, &src, ts)
		got, n := src.StealInto(&dst, runq.HalfUp)
		if n != tc.take {
			t.Fatalf("stealing from %d took %d, want %d", tc.have, n, tc.take)
		}
		if got != ts[tc.take-1] {
			t.Fatalf("stealing from %d: the task to run now is not the newest taken", tc.have)
		}
		same(t, "the others, oldest first, go to the thief's queue", ts[:tc.take-1], schedtest.Drain(&dst))
		same(t, "the victim keeps the newest", ts[tc.take:], schedtest.Drain(&src))
	}
}

func TestStealHalfDownTakesHalfRoundedDownAndLeavesALoneTask(t *testing.T) {
	for _, tc := range []struct{ have, take int }{{1, 0}, {2, 1}, {3, 1}, {5, 2}, {256, 128}} {
		var src, dst runq.Queue
		ts := schedtest.Tasks(tc.have)
		schedtest.Fill(t, &src, ts)
		got, n := src.StealInto(&dst, runq.HalfDown)
		if n != tc.take {
			t.Fatalf("stealing from %d took %d, want %d", tc.have, n, tc.take)
		}
		if tc.take == 0 {
			if got != nil {
				t.Fatalf("stealing from %d returned a task", tc.have)
			}
			same(t, "a lone task stays", ts, schedtest.Drain(&src))
			continue
		}
		if got != ts[0] {
			t.Fatalf("stealing from %d: the task to run now is not the oldest taken", tc.have)
		}
		same(t, "the others, oldest first, go to the thief's queue", ts[1:tc.take], schedtest.Drain(&dst))
		same(t, "the victim keeps the newest", ts[tc.take:], schedtest.Drain(&src))
	}
}

func TestStealFromAnEmptyQueueTakesNothing(t *testing.T) {
	for _, s := range []runq.Split{runq.HalfUp, runq.HalfDown} {
		var src, dst runq.Queue
		if got, n := src.StealInto(&dst, s); got != nil || n != 0 {
			t.Fatalf("split %d: took %d", s, n)
		}
	}
}

func TestStealHalfUpRefusesWhenTheThiefIsMoreThanHalfFull(t *testing.T) {
	var src, dst runq.Queue
	schedtest.Fill(t, &src, schedtest.Tasks(10))
	schedtest.Fill(t, &dst, schedtest.Tasks(runq.Half+1))
	if got, n := src.StealInto(&dst, runq.HalfUp); got != nil || n != 0 {
		t.Fatalf("took %d into a thief more than half full", n)
	}
	if src.Len() != 10 {
		t.Fatalf("the victim has %d tasks, want 10", src.Len())
	}
	// Exactly half full is still allowed.
	dst.Pop()
	if got, n := src.StealInto(&dst, runq.HalfUp); got == nil || n != 5 {
		t.Fatalf("took %d into a thief exactly half full, want 5", n)
	}
}

func TestStealHalfDownTakesNoMoreThanTheThiefHasRoomFor(t *testing.T) {
	var src, dst runq.Queue
	schedtest.Fill(t, &src, schedtest.Tasks(100))
	schedtest.Fill(t, &dst, schedtest.Tasks(runq.Capacity-3))
	if got, n := src.StealInto(&dst, runq.HalfDown); got == nil || n != 3 {
		t.Fatalf("took %d with room for 3, want 3", n)
	}
	if dst.Len() != runq.Capacity-1 {
		t.Fatalf("the thief holds %d, want its own and the two it queued", dst.Len())
	}
	// A claim on the thief's own queue can leave it without room even
	// when its owner has emptied it.
	schedtest.Fill(t, &dst, schedtest.Tasks(1))
	c := dst.HoldClaim(runq.Half)
	schedtest.Drain(&dst)
	if dst.Room() != 0 {
		t.Fatalf("room %d under the claim, want 0", dst.Room())
	}
	if got, n := src.StealInto(&dst, runq.HalfDown); got != nil || n != 0 {
		t.Fatalf("took %d into a thief without room", n)
	}
	c.Finish()
}

func TestAThiefBacksOffWhileAnotherHoldsAClaim(t *testing.T) {
	var src, dst runq.Queue
	schedtest.Fill(t, &src, schedtest.Tasks(8))
	c := src.HoldClaim(runq.Capacity)
	if c.Len() != 4 {
		t.Fatalf("the claim took %d, want 4", c.Len())
	}
	if got, n := src.StealInto(&dst, runq.HalfUp); got != nil || n != 0 {
		t.Fatalf("a second thief took %d; it must give up at once", n)
	}
	if src.HasStealable(runq.HalfUp) {
		t.Fatal("a queue under a claim reports something to steal")
	}
	c.Finish()
	if got, n := src.StealInto(&dst, runq.HalfUp); got == nil || n != 2 {
		t.Fatalf("after the release a steal took %d, want 2", n)
	}
}

func TestPushWhileAThiefHoldsAClaimSendsOnlyTheNewTaskToTheOverflow(t *testing.T) {
	var q runq.Queue
	ts := schedtest.Tasks(runq.Capacity + 1)
	schedtest.Fill(t, &q, ts[:runq.Capacity])
	c := q.HoldClaim(runq.Capacity)
	if c.Len() != runq.Half {
		t.Fatalf("the claim took %d, want %d", c.Len(), runq.Half)
	}
	// The owner pops past the claim: the claimed slots stay unusable until
	// the thief releases them, so the ring still counts as full.
	if popped := q.Pop(); popped != ts[runq.Half] {
		t.Fatal("the pop did not take the first task after the claim")
	}
	var rec schedtest.Recorder
	if res, _ := q.Push(ts[runq.Capacity], &rec); res != runq.OverflowedAroundClaim {
		t.Fatalf("push: %v, want OverflowedAroundClaim", res)
	}
	if len(rec.Calls) != 1 {
		t.Fatalf("%d overflow calls, want 1", len(rec.Calls))
	}
	same(t, "only the new task overflows", []*core.Task{ts[runq.Capacity]}, rec.Calls[0])
	// The thief finishes: it had claimed the oldest half.
	same(t, "claimed", ts[:runq.Half], c.Finish())
	same(t, "the rest is untouched", ts[runq.Half+1:runq.Capacity], schedtest.Drain(&q))
}

func TestPopDuringAClaimTakesTheTasksAfterTheClaimedOnes(t *testing.T) {
	var q runq.Queue
	ts := schedtest.Tasks(6)
	schedtest.Fill(t, &q, ts)
	c := q.HoldClaim(runq.Capacity)
	if c.Len() != 3 {
		t.Fatalf("the claim took %d, want 3", c.Len())
	}
	if q.Len() != 3 {
		t.Fatalf("Len %d: claimed tasks are no longer queued", q.Len())
	}
	same(t, "popped", ts[3:], schedtest.Drain(&q))
	c.Finish()
	if !q.IsEmpty() || q.Room() != runq.Capacity {
		t.Fatalf("room %d after the release, want every slot free", q.Room())
	}
}

func TestRoomCountsClaimedSlotsAsTaken(t *testing.T) {
	var q runq.Queue
	schedtest.Fill(t, &q, schedtest.Tasks(10))
	c := q.HoldClaim(runq.Capacity)
	q.Pop()
	if q.Room() != runq.Capacity-10 {
		t.Fatalf("room %d under the claim, want %d", q.Room(), runq.Capacity-10)
	}
	c.Finish()
	if q.Room() != runq.Capacity-4 {
		t.Fatalf("room %d after the release, want %d", q.Room(), runq.Capacity-4)
	}
}

func TestHasStealableNeedsTheBacklogTheSplitTakesFrom(t *testing.T) {
	var q runq.Queue
	if q.HasStealable(runq.HalfUp) || q.HasStealable(runq.HalfDown) {
		t.Fatal("an empty queue has something to steal")
	}
	schedtest.Fill(t, &q, schedtest.Tasks(1))
	if !q.HasStealable(runq.HalfUp) || q.HasStealable(runq.HalfDown) {
		t.Fatal("one task: stealable rounding up, not rounding down")
	}
	schedtest.Fill(t, &q, schedtest.Tasks(1))
	if !q.HasStealable(runq.HalfDown) {
		t.Fatal("two tasks: stealable rounding down")
	}
}

func TestAnExclusiveQueueRefusesThieves(t *testing.T) {
	var q, thief runq.Queue
	q.SetExclusive()
	if !q.Exclusive() {
		t.Fatal("Exclusive is false after SetExclusive")
	}
	schedtest.Fill(t, &q, schedtest.Tasks(2))
	defer func() {
		if recover() == nil {
			t.Fatal("a steal from an exclusive queue did not panic")
		}
	}()
	q.StealInto(&thief, runq.HalfDown)
}

func TestSlotsAreClearedWhenTheirTaskLeaves(t *testing.T) {
	for _, s := range []runq.Split{runq.HalfUp, runq.HalfDown} {
		var q, dst runq.Queue
		schedtest.Fill(t, &q, schedtest.Tasks(runq.Capacity))
		var rec schedtest.Recorder
		q.Push(schedtest.Tasks(1)[0], &rec)
		q.StealInto(&dst, s)
		c := q.HoldClaim(4)
		c.Finish()
		schedtest.Drain(&q)
		schedtest.Drain(&dst)
		for i := range q.Slots() {
			if q.Slots()[i] != nil || dst.Slots()[i] != nil {
				t.Fatalf("split %d: slot %d still holds a task", s, i)
			}
		}
	}
}

func TestRandCoversItsRangeAndDiffersBetweenWorkers(t *testing.T) {
	var a, b runq.Rand
	a.Seed(42, 0)
	b.Seed(42, 1)
	seen := make([]bool, 7)
	differ := false
	for range 1000 {
		x, y := a.N(7), b.N(7)
		if x < 0 || x >= 7 {
			t.Fatalf("N(7) = %d", x)
		}
		seen[x] = true
		differ = differ || x != y
	}
	for i, ok := range seen {
		if !ok {
			t.Fatalf("N(7) never returned %d in 1000 draws", i)
		}
	}
	if !differ {
		t.Fatal("two workers seeded alike draw the same numbers")
	}
}
