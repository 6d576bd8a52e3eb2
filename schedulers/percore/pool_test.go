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
		res, _ := w.rq.push(x, w.s)
		require.Equal(t, pushed, res)
	}
}

// drain pops every task of w's run queue.
func drain(w *worker) []*core.Task {
	var out []*core.Task
	for x := w.rq.pop(); x != nil; x = w.rq.pop() {
		out = append(out, x)
	}
	return out
}

// pushGlobal queues ts on the global queue.
func pushGlobal(t *testing.T, s *Scheduler, ts []*core.Task) {
	t.Helper()
	for _, x := range ts {
		require.True(t, s.global.push(x))
	}
}

// holdClaim makes the claim a thief holds while it copies: real moves n
// forward, steal stays. It returns the first claimed position.
func holdClaim(t *testing.T, q *runQueue, n uint32) uint32 {
	t.Helper()
	first, got := q.claim(n)
	require.Equal(t, n, got, "the claim takes what the test asks for")
	return first
}

// finishClaim copies the claimed tasks out and releases the claim.
func finishClaim(q *runQueue, first, n uint32) []*core.Task {
	out := make([]*core.Task, n)
	for i := range out {
		s := (first + uint32(i)) & mask
		out[i] = q.buf[s]
		q.buf[s] = nil
	}
	q.release(first)
	return out
}

func TestTakeMovesABoundedShareOfTheGlobalQueue(t *testing.T) {
	for _, c := range []struct{ workers, queued, taken int }{{4, 8, 3}, {1, half + 2, half + 1}} {
		s := pool(t, c.workers)
		w := s.workers[0]
		ts := tasks(c.queued)
		pushGlobal(t, s, ts)

		moved := []*core.Task{s.global.take(&w.rq)}
		moved = append(moved, drain(w)...)
		require.Len(t, moved, c.taken, "workers=%d queued=%d", c.workers, c.queued)
		assert.Equal(t, ts[:c.taken], moved, "a take keeps FIFO order")
		assert.Equal(t, c.queued-c.taken, s.global.len(), "the mirror follows the take")
	}
}

func TestTakeFillsTheRunQueueAtMostToHalf(t *testing.T) {
	for _, held := range []int{0, 100, half - 1, half, 200, capacity - 1} {
		s := pool(t, 1)
		w := s.workers[0]
		fill(t, w, tasks(held))
		pushGlobal(t, s, tasks(300))

		require.NotNil(t, s.global.take(&w.rq))
		moved := w.rq.len() - held + 1
		assert.Equal(t, max(half-held, 0)+1, moved,
			"a take into a run queue holding %d fills it to half and returns one more", held)
	}
}

func TestTakeLeavesTheSlotsOfAHeldClaimAlone(t *testing.T) {
	s := pool(t, 2)
	w := s.workers[0]
	fill(t, w, tasks(capacity))
	first := holdClaim(t, &w.rq, half)
	drain(w)
	require.Equal(t, 0, w.rq.room(), "a held claim keeps its slots and those popped past it")
	pushGlobal(t, s, tasks(200))

	require.NotNil(t, s.global.take(&w.rq))
	assert.Equal(t, 0, w.rq.len(), "no room: the take returns one task and queues none")

	// Released, the claim's slots are free again, and a take queues the
	// rest of an even split of the 199 left.
	finishClaim(&w.rq, first, half)
	require.NotNil(t, s.global.take(&w.rq))
	assert.Equal(t, 199/2+1, w.rq.len()+1)
}

func TestClosedGlobalQueueRefusesPushesAndShutsDownItsTasks(t *testing.T) {
	s := pool(t, 1)
	queued := task()
	s.pushGlobal(queued)
	assert.False(t, queued.IsComplete())

	s.close()
	assert.True(t, s.global.isEmpty())
	assert.True(t, queued.IsComplete(), "closing shuts down what the queue held")

	late := task()
	s.pushGlobal(late)
	assert.True(t, late.IsComplete(), "a push into the closed queue shuts the task down")
	assert.True(t, s.global.isEmpty())
}

func TestFullRunQueueMovesItsNewestHalfToTheGlobalQueue(t *testing.T) {
	s := pool(t, 1)
	w := s.workers[0]
	ts := tasks(capacity + 1)
	for _, x := range ts {
		w.push(x)
	}
	require.Equal(t, half, w.rq.len())
	assert.Equal(t, ts[:half], drain(w), "the oldest half stays, in order")
	var global []*core.Task
	for x := s.global.pop(); x != nil; x = s.global.pop() {
		global = append(global, x)
	}
	assert.Equal(t, ts[half:], global, "the newest half, then the new task, in order")

	// Once the global queue is closed, the exported batch is shut down.
	s.close()
	ts = tasks(capacity + 1)
	for _, x := range ts {
		w.push(x)
	}
	require.Equal(t, half, w.rq.len())
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
		first := holdClaim(t, &w.rq, half)
		if !open {
			s.close()
		}

		x := task()
		res, _ := w.rq.push(x, s)
		assert.Equal(t, claimed, res)
		assert.Equal(t, capacity-half, w.rq.len())
		if open {
			assert.Same(t, x, s.global.pop())
		} else {
			assert.True(t, x.IsComplete(), "the closed queue refuses it")
		}
		assert.Nil(t, s.global.pop())
		finishClaim(&w.rq, first, half)
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
	assert.Equal(t, 3, two.rq.len())
	// At most half the pool (here one worker) searches at once.
	assert.Nil(t, one.search(), "a second searcher of three workers is refused")
	zero.searching = false
	s.idle.stopSearch()

	// Of the three left, a second search takes one.
	assert.Same(t, ts[2], one.search())
	assert.Same(t, ts[3], two.rq.pop())
	// A lone task stays with its worker.
	assert.Nil(t, one.search())
	assert.Equal(t, 1, two.rq.len())
	assert.Equal(t, int32(1), s.idle.searching.Load(), "the thief still counts as searching")
}

func TestOnlyAOneWorkerPoolHasAnExclusiveRunQueue(t *testing.T) {
	for _, c := range []struct {
		workers   int
		exclusive bool
	}{{1, true}, {2, false}} {
		s := pool(t, c.workers)
		w := s.workers[0]
		assert.Equal(t, c.exclusive, w.rq.exclusive)
		fill(t, w, tasks(2))
		var thief runQueue
		steal := func() { w.rq.stealInto(&thief) }
		if c.exclusive {
			assert.Panics(t, steal, "an exclusive run queue refuses thieves")
		} else {
			assert.NotPanics(t, steal)
			assert.Equal(t, 1, thief.len())
		}
	}
}

func TestCloseUnparksEveryWorkerOnce(t *testing.T) {
	s := pool(t, 3)
	for _, w := range s.workers {
		require.Equal(t, parkAwake, w.parker.state.Load())
	}
	s.close()
	for i, w := range s.workers {
		assert.Equal(t, parkNotified, w.parker.state.Load(), "worker %d", i)
		// One pending notification: the next sleep returns at once, the
		// one after it would sleep.
		assert.True(t, w.parker.consume())
		assert.False(t, w.parker.consume())
	}
	_, first := s.global.close()
	assert.False(t, first, "closing again changes nothing")
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
