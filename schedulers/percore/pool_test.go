package percore

// The pool behaviours of seed 001 (commonware-runtime's io_uring pool),
// re-expressed as tests of percore. Seed test -> test here:
//
//	test_take_moves_a_bounded_share_of_the_global_queue
//	    -> TestTakeMovesABoundedShareOfTheGlobalQueue
//	test_take_fills_the_run_queue_at_most_to_half
//	    -> TestTakeFillsTheRunQueueAtMostToHalf
//	test_take_leaves_the_slots_of_a_held_claim_alone
//	    -> TestTakeLeavesTheSlotsOfAHeldClaimAlone
//	test_closed_queue_refuses_pushes_and_discards_its_runnables
//	    -> TestClosedGlobalQueueRefusesPushesAndShutsDownItsTasks
//	test_full_run_queue_moves_its_newest_half_to_the_global_queue
//	    -> TestFullRunQueueMovesItsNewestHalfToTheGlobalQueue
//	test_full_run_queue_under_a_claim_moves_only_the_new_runnable
//	    -> TestFullRunQueueUnderAClaimMovesOnlyTheNewTask
//	test_search_steals_half_of_another_run_queue
//	    -> TestSearchStealsHalfOfAnotherRunQueueAndLeavesALoneTask
//	test_only_a_one_worker_pool_has_an_exclusive_run_queue
//	    -> TestOnlyAOneWorkerPoolHasAnExclusiveRunQueue
//	test_stop_wakes_every_other_root_once
//	    -> TestCloseUnparksEveryWorkerOnce (weft has no per-worker roots:
//	       closing the pool is what ends every worker's drive loop)
//	test_workers_wait_for_the_close_and_for_every_finish
//	    -> TestWorkersWaitForTheCloseAndForEveryFinish
//
// The lifecycle and failure behaviours of the seed's module documentation
// are tested on running pools in lifecycle_test.go: workers start one at a
// time (TestWorkersStartOneAtATime), a startup failure stops the started
// workers (TestAStartupFailureStopsTheStartedWorkersAndFailsNew), the
// first failure reaches worker zero's root
// (TestTheFirstWorkerFailureReachesTheRoot), no driver closes before every
// worker drained (TestNoDriverClosesBeforeEveryWorkerHasDrained), at most
// 64 workers (TestMoreThan64WorkersIsAConfigErrorNamingTheKey).

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/park"
	"github.com/weftrt/weft/schedulers/internal/runq"
)

// The ring geometry of the kit's run queue.
const (
	capacity = runq.Capacity
	half     = runq.Half
)

// pool builds an n-worker scheduler without starting its workers, so the
// tests can drive its queues by hand.
func pool(t *testing.T, n int) *Scheduler {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Workers = n
	require.NoError(t, cfg.Validate())
	return build(cfg, core.SchedulerParams{Tasks: core.NewTaskSet(nil)})
}

// pending never completes.
type pending struct{}

func (pending) Poll(*core.Context) (core.Unit, bool) { return core.Unit{}, false }

// task returns a task that nothing has spawned, as queues see a task.
func task() *core.Task {
	t, _ := core.NewTask[core.Unit](pending{})
	return t
}

// tasks returns n of them.
func tasks(n int) []*core.Task {
	out := make([]*core.Task, n)
	for i := range out {
		out[i] = task()
	}
	return out
}

// fill pushes ts into w's run queue, each of which must fit.
func fill(t *testing.T, w *worker, ts []*core.Task) {
	t.Helper()
	for _, x := range ts {
		res, _ := w.rq.Push(x, w.s.overflow())
		require.Equal(t, runq.Queued, res)
	}
}

// drain pops every task of w's run queue.
func drain(w *worker) []*core.Task {
	var out []*core.Task
	for x := w.rq.Pop(); x != nil; x = w.rq.Pop() {
		out = append(out, x)
	}
	return out
}

// pushGlobal queues ts on the global queue.
func pushGlobal(t *testing.T, s *Scheduler, ts []*core.Task) {
	t.Helper()
	for _, x := range ts {
		require.True(t, s.global.Push(x))
	}
}

// holdClaim makes the claim a thief holds while it copies, of n tasks.
func holdClaim(t *testing.T, q *runq.Queue, n int) runq.Claim {
	t.Helper()
	c := q.HoldClaim(n)
	require.Equal(t, n, c.Len(), "the claim takes what the test asks for")
	return c
}

func TestTakeMovesABoundedShareOfTheGlobalQueue(t *testing.T) {
	for _, c := range []struct{ workers, queued, taken int }{{4, 8, 3}, {1, half + 2, half + 1}} {
		s := pool(t, c.workers)
		w := s.workers[0]
		ts := tasks(c.queued)
		pushGlobal(t, s, ts)

		moved := []*core.Task{s.global.Take(&w.rq, c.workers)}
		moved = append(moved, drain(w)...)
		require.Len(t, moved, c.taken, "workers=%d queued=%d", c.workers, c.queued)
		assert.Equal(t, ts[:c.taken], moved, "a take keeps FIFO order")
		assert.Equal(t, c.queued-c.taken, s.global.Len(), "the mirror follows the take")
	}
}

func TestTakeFillsTheRunQueueAtMostToHalf(t *testing.T) {
	for _, held := range []int{0, 100, half - 1, half, 200, capacity - 1} {
		s := pool(t, 1)
		w := s.workers[0]
		fill(t, w, tasks(held))
		pushGlobal(t, s, tasks(300))

		require.NotNil(t, s.global.Take(&w.rq, 1))
		moved := w.rq.Len() - held + 1
		assert.Equal(t, max(half-held, 0)+1, moved,
			"a take into a run queue holding %d fills it to half and returns one more", held)
	}
}

func TestTakeLeavesTheSlotsOfAHeldClaimAlone(t *testing.T) {
	s := pool(t, 2)
	w := s.workers[0]
	fill(t, w, tasks(capacity))
	c := holdClaim(t, &w.rq, half)
	drain(w)
	require.Equal(t, 0, w.rq.Room(), "a held claim keeps its slots and those popped past it")
	pushGlobal(t, s, tasks(200))

	require.NotNil(t, s.global.Take(&w.rq, len(s.workers)))
	assert.Equal(t, 0, w.rq.Len(), "no room: the take returns one task and queues none")

	// Released, the claim's slots are free again, and a take queues the
	// rest of an even split of the 199 left.
	c.Finish()
	require.NotNil(t, s.global.Take(&w.rq, len(s.workers)))
	assert.Equal(t, 199/2+1, w.rq.Len()+1)
}

func TestClosedGlobalQueueRefusesPushesAndShutsDownItsTasks(t *testing.T) {
	s := pool(t, 1)
	queued := task()
	s.pushGlobal(queued)
	assert.False(t, queued.IsComplete())

	s.close()
	assert.True(t, s.global.IsEmpty())
	assert.True(t, queued.IsComplete(), "closing shuts down what the queue held")

	late := task()
	s.pushGlobal(late)
	assert.True(t, late.IsComplete(), "a push into the closed queue shuts the task down")
	assert.True(t, s.global.IsEmpty())
}

func TestFullRunQueueMovesItsNewestHalfToTheGlobalQueue(t *testing.T) {
	s := pool(t, 1)
	w := s.workers[0]
	ts := tasks(capacity + 1)
	for _, x := range ts {
		w.push(x)
	}
	require.Equal(t, half, w.rq.Len())
	assert.Equal(t, ts[:half], drain(w), "the oldest half stays, in order")
	var global []*core.Task
	for x := s.global.Pop(); x != nil; x = s.global.Pop() {
		global = append(global, x)
	}
	assert.Equal(t, ts[half:], global, "the newest half, then the new task, in order")

	// Once the global queue is closed, the exported batch is shut down.
	s.close()
	ts = tasks(capacity + 1)
	for _, x := range ts {
		w.push(x)
	}
	require.Equal(t, half, w.rq.Len())
	for _, x := range ts[:half] {
		assert.False(t, x.IsComplete())
	}
	for _, x := range ts[half:] {
		assert.True(t, x.IsComplete())
	}
}

func TestFullRunQueueUnderAClaimMovesOnlyTheNewTask(t *testing.T) {
	for _, open := range []bool{true, false} {
		s := pool(t, 2)
		w := s.workers[0]
		fill(t, w, tasks(capacity))
		c := holdClaim(t, &w.rq, half)
		if !open {
			s.close()
		}

		x := task()
		res, _ := w.rq.Push(x, s.overflow())
		assert.Equal(t, runq.OverflowedAroundClaim, res)
		assert.Equal(t, capacity-half, w.rq.Len())
		if open {
			assert.Same(t, x, s.global.Pop())
		} else {
			assert.True(t, x.IsComplete(), "the closed queue refuses it")
		}
		assert.Nil(t, s.global.Pop())
		c.Finish()
	}
}

func TestSearchStealsHalfOfAnotherRunQueueAndLeavesALoneTask(t *testing.T) {
	s := pool(t, 3)
	zero, one, two := s.workers[0], s.workers[1], s.workers[2]
	ts := tasks(5)
	fill(t, two, ts)

	// Half of five, rounded down: the first runs now, the second waits in
	// the thief's run queue.
	assert.Same(t, ts[0], zero.search())
	assert.Equal(t, []*core.Task{ts[1]}, drain(zero))
	assert.Equal(t, 3, two.rq.Len())
	// At most half the pool (here one worker) searches at once.
	assert.Nil(t, one.search(), "a second searcher of three workers is refused")
	zero.searching = false
	s.idle.stopSearch()

	// Of the three left, a second search takes one.
	assert.Same(t, ts[2], one.search())
	assert.Same(t, ts[3], two.rq.Pop())
	// A lone task stays with its worker.
	assert.Nil(t, one.search())
	assert.Equal(t, 1, two.rq.Len())
	assert.Equal(t, int32(1), s.idle.searching.Load(), "the thief still counts as searching")
}

func TestOnlyAOneWorkerPoolHasAnExclusiveRunQueue(t *testing.T) {
	for _, c := range []struct {
		workers   int
		exclusive bool
	}{{1, true}, {2, false}} {
		s := pool(t, c.workers)
		w := s.workers[0]
		assert.Equal(t, c.exclusive, w.rq.Exclusive())
		fill(t, w, tasks(2))
		var thief runq.Queue
		var took int
		steal := func() { _, took = w.rq.StealInto(&thief, split) }
		if c.exclusive {
			assert.Panics(t, steal, "an exclusive run queue refuses thieves")
		} else {
			assert.NotPanics(t, steal)
			assert.Equal(t, 1, took)
		}
	}
}

func TestCloseUnparksEveryWorkerOnce(t *testing.T) {
	s := pool(t, 3)
	for _, w := range s.workers {
		require.Equal(t, park.Empty, w.parker.State())
	}
	s.close()
	for i, w := range s.workers {
		assert.Equal(t, park.Notified, w.parker.State(), "worker %d", i)
		// One pending notification: the next park returns at once, the
		// one after it would park.
		assert.True(t, w.parker.Consume())
		assert.False(t, w.parker.Consume())
	}
	assert.False(t, s.global.Close(), "closing again changes nothing")
}

// blocked is how long a test watches for a goroutine that must stay
// blocked. A broken barrier may slip through it; a correct one never
// fails it.
const blocked = 20 * time.Millisecond

func TestWorkersWaitForTheCloseAndForEveryFinish(t *testing.T) {
	s := pool(t, 2)
	b := &s.barrier
	b.enter()
	b.enter()
	progress := make(chan string, 2)
	go func() {
		b.waitClosed()
		progress <- "closed"
		b.finish()
		progress <- "finished"
	}()

	select {
	case p := <-progress:
		t.Fatalf("%s before the pool closed", p)
	case <-time.After(blocked):
	}
	b.markClosed()
	assert.Equal(t, "closed", <-progress)

	// The other worker waits until this one finishes too.
	select {
	case p := <-progress:
		t.Fatalf("%s before every worker finished", p)
	case <-time.After(blocked):
	}
	b.finish()
	assert.Equal(t, "finished", <-progress)
}
