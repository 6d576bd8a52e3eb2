package conformance_test

import (
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// miniScheduler is the smallest scheduler that can honour the SPI: one
// queue, tasks run inside BlockOn. With lossy set it has one deliberate
// bug: it ignores Run's report that a task was woken during its poll, the
// classic lost wake-up. The suite must catch it.
type miniScheduler struct {
	p     core.SchedulerParams
	lossy bool

	mu       sync.Mutex
	queue    core.TaskQueue
	closed   bool
	wake     chan struct{}
	running  sync.Mutex
	deferred []core.Waker
	wcx      spi.WorkerContext
	cx       *core.Context
}

type miniWorker struct{ s *miniScheduler }

func (w miniWorker) Scheduler() core.Scheduler { return w.s }
func (w miniWorker) Defer(wk core.Waker)       { w.s.deferred = append(w.s.deferred, wk) }
func (w miniWorker) Driver() core.Driver       { return nil }
func (w miniWorker) Time() *core.Time          { return nil }

func newMini(lossy bool) conformance.SchedulerFactory {
	return func(p core.SchedulerParams) (core.Scheduler, error) {
		s := &miniScheduler{p: p, lossy: lossy, wake: make(chan struct{}, 1)}
		s.wcx = spi.NewWorkerContext(miniWorker{s})
		s.cx = s.wcx.Context()
		return s, nil
	}
}

func (s *miniScheduler) Spawn(t *core.Task, from core.Worker) error {
	spi.Bind(t, s)
	if err := s.p.Tasks.Bind(t); err != nil {
		return err
	}
	s.Schedule(t, from)
	return nil
}

func (s *miniScheduler) Schedule(t *core.Task, _ core.Worker) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		spi.Shutdown(t)
		return
	}
	s.queue.Push(t)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *miniScheduler) BlockOn(_ *core.Task, done <-chan struct{}) {
	s.running.Lock()
	defer s.running.Unlock()
	s.p.Hooks.RunAfterStart()
	defer s.p.Hooks.RunBeforeStop()
	defer func() {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			s.cancelAll()
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		s.mu.Lock()
		closed := s.closed
		t := s.queue.Pop()
		s.mu.Unlock()
		if closed {
			return
		}
		if t == nil {
			if len(s.deferred) > 0 {
				d := s.deferred
				s.deferred = nil
				for _, w := range d {
					w.Wake()
				}
				continue
			}
			select {
			case <-s.wake:
			case <-done:
				return
			}
			continue
		}
		s.wcx.ResetBudget()
		if spi.Run(t, s.cx) && !s.lossy {
			s.Schedule(t, nil)
		}
	}
}

func (s *miniScheduler) Shutdown() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	// A BlockOn in progress (possibly our caller, from inside a task)
	// cancels everything when it sees the closed flag; otherwise we do.
	if s.running.TryLock() {
		s.cancelAll()
		s.running.Unlock()
	}
}

// cancelAll cancels every task and empties the queue.
func (s *miniScheduler) cancelAll() {
	s.p.Tasks.ShutdownAll(0)
	s.mu.Lock()
	var rest core.TaskQueue
	rest.PushAll(&s.queue)
	s.mu.Unlock()
	for t := rest.Pop(); t != nil; t = rest.Pop() {
		spi.Shutdown(t)
	}
}

func TestSuiteHasAtLeast25Behaviours(t *testing.T) {
	assert.GreaterOrEqual(t, len(conformance.SchedulerBehaviours()), 25)
}

// TestMiniSchedulerConforms shows the suite passing for a minimal correct
// scheduler, so the failures below are the bug's doing.
func TestMiniSchedulerConforms(t *testing.T) {
	if os.Getenv("CONFORMANCE_LOSSY_CHILD") != "" {
		t.Skip("running as the lossy child")
	}
	conformance.Scheduler(t, newMini(false))
}

// TestLossyChild is run in a subprocess by TestSuiteCatchesALostWakeDuringPoll.
func TestLossyChild(t *testing.T) {
	if os.Getenv("CONFORMANCE_LOSSY_CHILD") == "" {
		t.Skip("only runs as a subprocess")
	}
	conformance.Scheduler(t, newMini(true))
}

// TestSuiteCatchesALostWakeDuringPoll runs the suite against a scheduler
// that drops wakes arriving during a poll, in a child process (the bug
// makes behaviours hang until the watchdog fires), and checks that the
// suite fails, naming the behaviours that depend on such wakes.
func TestSuiteCatchesALostWakeDuringPoll(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite in a subprocess")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLossyChild$", "-test.v")
	cmd.Env = append(os.Environ(), "CONFORMANCE_LOSSY_CHILD=1", "CONFORMANCE_HANG_LIMIT=2s")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the suite must fail against the lossy scheduler:\n%s", out)
	text := string(out)
	for _, b := range []string{"SelfWakeDuringPollIsNotLost", "ForeignWakeDuringPollIsNotLost"} {
		assert.True(t, strings.Contains(text, "--- FAIL: TestLossyChild/"+b), "behaviour %s should fail:\n%s", b, text)
	}
	assert.True(t, strings.Contains(text, "--- PASS: TestLossyChild/BlockOnReturnsTheRootValue"), "unaffected behaviours still pass")
}
