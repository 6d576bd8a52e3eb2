package workstealing

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/park"
)

// stillScheduler builds a scheduler whose worker goroutines are not
// started, and a runner holding each worker's core, so a test can drive
// the idle protocol step by step.
func stillScheduler(t *testing.T, n int) (*Scheduler, []*runner) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Workers = n
	s, err := build(cfg, core.SchedulerParams{Tasks: core.NewTaskSet(nil)})
	require.NoError(t, err)
	rs := make([]*runner, n)
	for i, w := range s.workers {
		rs[i] = &runner{s: s, core: w.handoff.Swap(nil)}
		rs[i].wcx = spi.NewWorkerContext(rs[i])
		rs[i].cx = rs[i].wcx.Context()
	}
	return s, rs
}

func TestAWakeRacingWithTheLastSearcherParkingIsNotLost(t *testing.T) {
	s, rs := stillScheduler(t, 2)
	// Worker 1 sleeps.
	require.True(t, rs[1].transitionToParked())
	// Worker 0 is searching and has just finished its last scan.
	require.True(t, s.idle.tryStartSearch())
	rs[0].core.searching = true

	// A task arrives in the global queue now. Its notifier sees a
	// searcher and, rightly, wakes nobody: the searcher is responsible.
	task, _ := core.NewTask(core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { return 0, true })))
	require.True(t, s.global.Push(task))
	s.notify()
	assert.Equal(t, park.Empty, s.workers[1].parker.State(), "no wake while someone searches")
	assert.True(t, s.idle.isParked(1))

	// The searcher gives up and parks. As the last searcher it looks at
	// every queue once more, finds the task, and wakes a worker.
	require.True(t, rs[0].transitionToParked())
	unparked, searching := s.idle.counts()
	assert.Equal(t, 1, unparked, "one worker is awake again")
	assert.Equal(t, 1, searching, "and searching")
	woken := 0
	for _, w := range s.workers {
		if w.parker.State() == park.Notified {
			woken++
		}
	}
	assert.Equal(t, 1, woken, "exactly one worker was unparked")
}

func TestAWorkerThatIsNotTheLastSearcherParksWithoutRechecking(t *testing.T) {
	s, rs := stillScheduler(t, 4)
	require.True(t, s.idle.tryStartSearch())
	require.True(t, s.idle.tryStartSearch())
	rs[0].core.searching = true
	rs[1].core.searching = true
	task, _ := core.NewTask(core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { return 0, true })))
	require.True(t, s.global.Push(task))
	require.True(t, rs[0].transitionToParked())
	for _, w := range s.workers {
		assert.Equal(t, park.Empty, w.parker.State(), "worker 1 still searches; it will find the task")
	}
}

func TestAtMostHalfTheWorkersSearch(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 8} {
		i := newIdle(n)
		got := 0
		for k := 0; k < n; k++ {
			if i.tryStartSearch() {
				got++
			}
		}
		assert.Equal(t, max(1, (n+1)/2), got, "%d workers", n)
	}
}

func TestTheLastSearcherToFindWorkWakesAnotherWorker(t *testing.T) {
	s, rs := stillScheduler(t, 2)
	require.True(t, rs[1].transitionToParked())
	require.True(t, s.idle.tryStartSearch())
	rs[0].core.searching = true
	// Worker 0 found a task: where there was one there may be more, so
	// another worker takes over the search.
	task, _ := core.NewTask(core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { return 0, true })))
	spi.Bind(task, s)
	rs[0].runTask(task)
	assert.Equal(t, park.Notified, s.workers[1].parker.State())
	_, searching := s.idle.counts()
	assert.Equal(t, 1, searching, "worker 1 searches now")
}
