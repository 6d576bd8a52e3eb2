package globalq_test

import (
	"slices"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/globalq"
	"github.com/weftrt/weft/schedulers/internal/runq"
	"github.com/weftrt/weft/schedulers/internal/schedtest"
)

func push(t *testing.T, q *globalq.Queue, ts []*core.Task) {
	t.Helper()
	for _, x := range ts {
		if !q.Push(x) {
			t.Fatal("an open queue refused a push")
		}
	}
}

func popAll(q *globalq.Queue) []*core.Task {
	var out []*core.Task
	for x := q.Pop(); x != nil; x = q.Pop() {
		out = append(out, x)
	}
	return out
}

func TestTheQueueIsFIFOAndItsMirrorFollowsEveryChange(t *testing.T) {
	var q globalq.Queue
	ts := schedtest.Tasks(5)
	push(t, &q, ts[:3])
	var b core.TaskQueue
	b.Push(ts[3])
	b.Push(ts[4])
	if !q.PushBatch(&b) || b.Len() != 0 {
		t.Fatal("PushBatch did not take the batch")
	}
	if q.Len() != 5 || q.IsEmpty() {
		t.Fatalf("Len %d, want 5", q.Len())
	}
	if x := q.Pop(); x != ts[0] || q.Len() != 4 {
		t.Fatalf("Pop took the wrong task or left Len %d", q.Len())
	}
	var rest core.TaskQueue
	q.TakeAll(&rest)
	if q.Len() != 0 || !q.IsEmpty() || rest.Len() != 4 {
		t.Fatalf("TakeAll left Len %d and took %d", q.Len(), rest.Len())
	}
	for _, want := range ts[1:] {
		if rest.Pop() != want {
			t.Fatal("TakeAll broke the order")
		}
	}
}

func TestAClosedQueueRefusesPushesAndKeepsWhatItHolds(t *testing.T) {
	var q globalq.Queue
	ts := schedtest.Tasks(3)
	push(t, &q, ts[:1])
	if !q.Close() || q.Close() {
		t.Fatal("Close must report true once, then false")
	}
	if !q.IsClosed() {
		t.Fatal("IsClosed is false after Close")
	}
	if q.Push(ts[1]) {
		t.Fatal("a closed queue took a push")
	}
	var b core.TaskQueue
	b.Push(ts[2])
	if q.PushBatch(&b) || b.Len() != 1 {
		t.Fatal("a closed queue took a batch, or the batch lost its task")
	}
	if ts[1].IsComplete() || ts[2].IsComplete() {
		t.Fatal("a refused push must leave the task to the caller")
	}
	if got := popAll(&q); !slices.Equal(got, ts[:1]) {
		t.Fatal("what was queued before the close is gone")
	}
}

func TestAnOverflowIntoAClosedQueueShutsTheTasksDown(t *testing.T) {
	var q globalq.Queue
	q.Close()
	ts := schedtest.Tasks(3)
	q.OverflowOne(ts[0])
	var b core.TaskQueue
	b.Push(ts[1])
	b.Push(ts[2])
	q.OverflowBatch(&b)
	for i, x := range ts {
		if !x.IsComplete() {
			t.Fatalf("task %d was neither queued nor shut down", i)
		}
	}
	if !q.IsEmpty() || b.Len() != 0 {
		t.Fatal("the closed queue or the batch kept a task")
	}
}

func TestPushOrShutdownShutsTheTaskDownOnceTheQueueIsClosed(t *testing.T) {
	var q globalq.Queue
	ts := schedtest.Tasks(2)
	if !q.PushOrShutdown(ts[0]) || ts[0].IsComplete() {
		t.Fatal("an open queue did not queue the task")
	}
	q.Close()
	if q.PushOrShutdown(ts[1]) || !ts[1].IsComplete() {
		t.Fatal("a closed queue did not shut the task down")
	}
	if q.Len() != 1 || q.Pushes() != 1 {
		t.Fatalf("Len %d, Pushes %d: want the first task only", q.Len(), q.Pushes())
	}
}

func TestPushesCountsOnlyThePushesOfSingleTasks(t *testing.T) {
	var q globalq.Queue
	ts := schedtest.Tasks(4)
	push(t, &q, ts[:2])
	q.OverflowOne(ts[2])
	var b core.TaskQueue
	b.Push(ts[3])
	q.OverflowBatch(&b)
	if q.Pushes() != 2 {
		t.Fatalf("Pushes %d, want 2: overflows are not remote schedules", q.Pushes())
	}
}

func TestTakeMovesABoundedShareOfTheQueue(t *testing.T) {
	for _, c := range []struct{ workers, queued, taken int }{{4, 8, 3}, {2, 1, 1}, {1, runq.Half + 2, runq.Half + 1}} {
		var q globalq.Queue
		var rq runq.Queue
		ts := schedtest.Tasks(c.queued)
		push(t, &q, ts)
		moved := []*core.Task{q.Take(&rq, c.workers)}
		moved = append(moved, schedtest.Drain(&rq)...)
		if !slices.Equal(moved, ts[:c.taken]) {
			t.Fatalf("workers=%d queued=%d: took %d, want the oldest %d in order", c.workers, c.queued, len(moved), c.taken)
		}
		if q.Len() != c.queued-c.taken {
			t.Fatalf("workers=%d queued=%d: the mirror reads %d after the take", c.workers, c.queued, q.Len())
		}
	}
}

func TestTakeFromAnEmptyQueueReturnsNil(t *testing.T) {
	var q globalq.Queue
	var rq runq.Queue
	if q.Take(&rq, 1) != nil {
		t.Fatal("Take from an empty queue returned a task")
	}
}

func TestTakeFillsTheRunQueueAtMostToHalf(t *testing.T) {
	for _, held := range []int{0, 100, runq.Half - 1, runq.Half, 200, runq.Capacity - 1} {
		var q globalq.Queue
		var rq runq.Queue
		schedtest.Fill(t, &rq, schedtest.Tasks(held))
		push(t, &q, schedtest.Tasks(300))
		if q.Take(&rq, 1) == nil {
			t.Fatal("Take returned nothing")
		}
		if moved := rq.Len() - held + 1; moved != max(runq.Half-held, 0)+1 {
			t.Fatalf("a take into a run queue holding %d moved %d, want it filled to half and one more", held, moved)
		}
	}
}

func TestTakeLeavesTheSlotsOfAHeldClaimAlone(t *testing.T) {
	var q globalq.Queue
	var rq runq.Queue
	schedtest.Fill(t, &rq, schedtest.Tasks(runq.Capacity))
	c := rq.HoldClaim(runq.Half)
	schedtest.Drain(&rq)
	if rq.Room() != 0 {
		t.Fatalf("room %d: a held claim keeps its slots and those popped past it", rq.Room())
	}
	push(t, &q, schedtest.Tasks(200))
	if q.Take(&rq, 2) == nil || rq.Len() != 0 {
		t.Fatalf("no room: the take must return one task and queue none, queued %d", rq.Len())
	}
	// Released, the claim's slots are free again, and a take queues the
	// rest of an even split of the 199 left.
	c.Finish()
	if q.Take(&rq, 2) == nil || rq.Len()+1 != 199/2+1 {
		t.Fatalf("after the release the take moved %d, want %d", rq.Len()+1, 199/2+1)
	}
}

func TestAnOverflowKeepsTasksTakenFromTheGlobalQueueUntilTheyRun(t *testing.T) {
	// A worker takes at most half a ring into its run queue; whatever it
	// pushes afterwards overflows before the taken tasks do.
	var q, overflow globalq.Queue
	var rq runq.Queue
	taken := schedtest.Tasks(runq.Half + 1)
	push(t, &q, taken)
	if q.Take(&rq, 1) != taken[0] {
		t.Fatal("the first task taken must be returned to run at once")
	}
	taken = taken[1:]
	for _, x := range schedtest.Tasks(runq.Capacity) {
		rq.Push(x, &overflow)
	}
	if overflow.IsEmpty() {
		t.Fatal("nothing overflowed")
	}
	for _, x := range popAll(&overflow) {
		if slices.Contains(taken, x) {
			t.Fatal("a task taken from the global queue was sent back before it ran")
		}
	}
	if got := schedtest.Drain(&rq); !slices.Equal(got[:runq.Half], taken) {
		t.Fatal("the taken tasks are not the oldest half of the run queue")
	}
}

func TestShutdownAllShutsDownAndEmptiesTheBatch(t *testing.T) {
	ts := schedtest.Tasks(3)
	var b core.TaskQueue
	for _, x := range ts {
		b.Push(x)
	}
	globalq.ShutdownAll(&b)
	if b.Len() != 0 {
		t.Fatal("the batch kept tasks")
	}
	for i, x := range ts {
		if !x.IsComplete() {
			t.Fatalf("task %d was not shut down", i)
		}
	}
}
