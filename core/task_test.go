package core

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manualSched queues scheduled tasks in a slice for the test to run.
type manualSched struct {
	mu     sync.Mutex
	queued []*Task
	closed bool
}

func (s *manualSched) Spawn(t *Task, from Worker) error { t.bind(s); s.Schedule(t, from); return nil }
func (s *manualSched) Schedule(t *Task, _ Worker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		t.shutdown()
		return
	}
	s.queued = append(s.queued, t)
}
func (s *manualSched) BlockOn(*Task, <-chan struct{}) {}
func (s *manualSched) Shutdown()                      {}

func (s *manualSched) pop() *Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queued) == 0 {
		return nil
	}
	t := s.queued[0]
	s.queued = s.queued[1:]
	return t
}

func spawnManual[T any](s *manualSched, f Future[T]) *JoinHandle[T] {
	t, h := NewTask(f)
	_ = s.Spawn(t, nil)
	return h
}

type countWaker struct{ n atomic.Int64 }

func (w *countWaker) Wake() { w.n.Add(1) }

func TestNewTaskIsQueuedOnceAndIDsIncrease(t *testing.T) {
	s := &manualSched{}
	h1 := spawnManual(s, Future[int](PollFunc[int](func(*Context) (int, bool) { return 1, true })))
	h2 := spawnManual(s, Future[int](PollFunc[int](func(*Context) (int, bool) { return 2, true })))
	assert.Less(t, h1.ID(), h2.ID())
	assert.Len(t, s.queued, 2)
}

func TestWakeWhileQueuedDoesNotQueueAgain(t *testing.T) {
	s := &manualSched{}
	h := spawnManual(s, Future[int](PollFunc[int](func(*Context) (int, bool) { return 0, false })))
	h.Task().Wake()
	h.Task().Wake()
	assert.Len(t, s.queued, 1, "NOTIFIED already set: no second queueing")
}

func TestWakeDuringRunIsReportedNotQueued(t *testing.T) {
	s := &manualSched{}
	var self Waker
	h := spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) {
		self = cx.Waker()
		self.Wake()
		return 0, false
	})))
	cx := newWorkerContext(nil)
	tk := s.pop()
	assert.True(t, tk.run(cx), "woken during its poll: the caller must re-queue")
	assert.Empty(t, s.queued, "the wake itself queued nothing")
	assert.False(t, h.IsFinished())
}

func TestIdleTaskWokenIsQueued(t *testing.T) {
	s := &manualSched{}
	var w Waker
	spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) { w = cx.Waker(); return 0, false })))
	assert.False(t, s.pop().run(newWorkerContext(nil)))
	w.Wake()
	assert.Len(t, s.queued, 1)
}

func TestCompletedTaskIgnoresWakesAndRuns(t *testing.T) {
	s := &manualSched{}
	polls := 0
	var w Waker
	h := spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) { polls++; w = cx.Waker(); return 5, true })))
	tk := s.pop()
	tk.run(newWorkerContext(nil))
	w.Wake()
	assert.Empty(t, s.queued)
	tk.run(newWorkerContext(nil))
	assert.Equal(t, 1, polls)
	res, ok := h.Poll(NewContext(nil))
	require.True(t, ok)
	assert.Equal(t, 5, res.Value)
}

type dropCounter struct {
	drops int
	polls int
}

func (d *dropCounter) Poll(*Context) (int, bool) { d.polls++; return 0, false }
func (d *dropCounter) Drop()                     { d.drops++ }

func TestAbortOfIdleTaskQueuesItAndRunCancels(t *testing.T) {
	s := &manualSched{}
	f := &dropCounter{}
	h := spawnManual(s, Future[int](f))
	s.pop().run(newWorkerContext(nil))
	h.Abort()
	require.Len(t, s.queued, 1, "an idle aborted task is queued so a worker cancels it")
	s.pop().run(newWorkerContext(nil))
	assert.Equal(t, 1, f.drops)
	assert.Equal(t, 1, f.polls)
	res, ok := h.Poll(NewContext(nil))
	require.True(t, ok)
	assert.True(t, errors.Is(res.Err, ErrAborted))
	assert.True(t, IsCancelled(res.Err))
}

func TestAbortDuringPollCancelsAfterThePoll(t *testing.T) {
	s := &manualSched{}
	f := &dropCounter{}
	var h *JoinHandle[int]
	h = spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) {
		h.Abort()
		return f.Poll(cx)
	})))
	assert.False(t, s.pop().run(newWorkerContext(nil)))
	assert.True(t, h.IsFinished())
	assert.Empty(t, s.queued)
}

func TestPanicBecomesAJoinErrorAndDropsTheFuture(t *testing.T) {
	s := &manualSched{}
	d := &dropCounter{}
	h := spawnManual(s, Future[int](&panicky{d}))
	s.pop().run(newWorkerContext(nil))
	res, ok := h.Poll(NewContext(nil))
	require.True(t, ok)
	var je *JoinError
	require.True(t, errors.As(res.Err, &je))
	assert.True(t, je.IsPanic())
	assert.Equal(t, "kaboom", je.PanicValue())
	assert.NotEmpty(t, je.Stack())
	assert.Equal(t, 1, d.drops, "a panicked future is dropped")
}

type panicky struct{ d *dropCounter }

func (p *panicky) Poll(*Context) (int, bool) { panic("kaboom") }
func (p *panicky) Drop()                     { p.d.Drop() }

func TestJoinHandleWakerIsWokenOnceOnCompletionAndCanBeReplaced(t *testing.T) {
	s := &manualSched{}
	release := false
	var w Waker
	h := spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) {
		w = cx.Waker()
		return 3, release
	})))
	first, second := &countWaker{}, &countWaker{}
	_, ok := h.Poll(NewContext(first))
	require.False(t, ok)
	_, ok = h.Poll(NewContext(second))
	require.False(t, ok)
	s.pop().run(newWorkerContext(nil))
	release = true
	w.Wake()
	s.pop().run(newWorkerContext(nil))
	assert.Zero(t, first.n.Load(), "the replaced waker is not woken")
	assert.EqualValues(t, 1, second.n.Load())
	res, ok := h.Poll(NewContext(second))
	require.True(t, ok)
	assert.Equal(t, 3, res.Value)
}

// TestJoinWakerProtocolUnderRacingCompletion races a handle re-registering
// wakers against the task completing on another goroutine: the handle must
// either see the output or have a waker that gets woken.
func TestJoinWakerProtocolUnderRacingCompletion(t *testing.T) {
	for round := 0; round < 2000; round++ {
		s := &manualSched{}
		h := spawnManual(s, Future[int](PollFunc[int](func(*Context) (int, bool) { return 1, true })))
		tk := s.pop()
		wakers := []*countWaker{{}, {}, {}}
		var done sync.WaitGroup
		done.Add(1)
		go func() { defer done.Done(); tk.run(newWorkerContext(nil)) }()
		ready := false
		for _, w := range wakers {
			if _, ok := h.Poll(NewContext(w)); ok {
				ready = true
				break
			}
		}
		done.Wait()
		if !ready {
			last := wakers[len(wakers)-1]
			require.EqualValues(t, 1, last.n.Load(), "round %d: the registered waker must be woken", round)
		}
		_, ok := h.Poll(NewContext(nil))
		require.True(t, ok)
	}
}

func TestShutdownCancelsIdleAndQueuedTasksAndTaskSetEmpties(t *testing.T) {
	s := &manualSched{}
	set := NewTaskSet(nil)
	var fs []*dropCounter
	var hs []*JoinHandle[int]
	for i := 0; i < 10; i++ {
		f := &dropCounter{}
		tk, h := NewTask(Future[int](f))
		tk.bind(s)
		require.NoError(t, set.Bind(tk))
		s.Schedule(tk, nil)
		fs, hs = append(fs, f), append(hs, h)
	}
	// Run half so they are idle; the rest stay queued.
	for i := 0; i < 5; i++ {
		s.pop().run(newWorkerContext(nil))
	}
	assert.Equal(t, 10, set.Len())
	set.ShutdownAll(0)
	assert.Equal(t, 0, set.Len())
	for i, h := range hs {
		res, ok := h.Poll(NewContext(nil))
		require.True(t, ok, "task %d", i)
		assert.True(t, errors.Is(res.Err, ErrShutdown))
		assert.Equal(t, 1, fs[i].drops)
	}
	// Queued tasks that were cancelled are skipped by Run.
	for tk := s.pop(); tk != nil; tk = s.pop() {
		assert.False(t, tk.run(newWorkerContext(nil)))
	}
	tk, _ := NewTask(Future[int](&dropCounter{}))
	assert.ErrorIs(t, set.Bind(tk), ErrShutdown, "a closed set refuses tasks")
}

func TestRejectResolvesTheHandleWithTheCauseAndDrops(t *testing.T) {
	f := &dropCounter{}
	tk, h := NewTask(Future[int](f))
	cause := errors.New("no room")
	tk.reject(cause)
	res, ok := h.Poll(NewContext(nil))
	require.True(t, ok)
	assert.ErrorIs(t, res.Err, cause)
	assert.Equal(t, 1, f.drops)
}

func TestBudgetIsExhaustedAfterBudgetUnitsAndWakes(t *testing.T) {
	cx := newWorkerContext(nil)
	w := &countWaker{}
	cx.waker = w
	cx.resetBudget()
	for i := 0; i < Budget; i++ {
		require.True(t, cx.Proceed())
	}
	assert.False(t, cx.Proceed())
	assert.EqualValues(t, 1, w.n.Load(), "exhaustion wakes the task")
	assert.EqualValues(t, 1, cx.BudgetExhaustions())
	assert.True(t, NewContext(nil).Proceed(), "outside a runtime the budget is unconstrained")
}

func TestYieldIsPendingOnceThenReady(t *testing.T) {
	w := &countWaker{}
	cx := NewContext(w)
	y := Yield()
	_, ok := y.Poll(cx)
	assert.False(t, ok)
	assert.EqualValues(t, 1, w.n.Load(), "outside a runtime the deferred wake is immediate")
	_, ok = y.Poll(cx)
	assert.True(t, ok)
}

func TestTaskQueueIsFIFOAndPushAllAppends(t *testing.T) {
	var q, r TaskQueue
	ts := make([]*Task, 6)
	for i := range ts {
		ts[i], _ = NewTask(Future[int](&dropCounter{}))
	}
	q.Push(ts[0])
	q.Push(ts[1])
	r.Push(ts[2])
	r.Push(ts[3])
	q.PushAll(&r)
	assert.Zero(t, r.Len())
	q.Push(ts[4])
	assert.Equal(t, 5, q.Len())
	for i := 0; i < 5; i++ {
		assert.Same(t, ts[i], q.Pop())
	}
	assert.Nil(t, q.Pop())
}

// FuzzTaskQueue checks TaskQueue against a slice model over random
// sequences of push, push-all and pop.
func FuzzTaskQueue(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 0, 2, 2, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var q, other TaskQueue
		var model, otherModel []*Task
		for _, op := range ops {
			switch op % 4 {
			case 0:
				tk, _ := NewTask(Future[int](&dropCounter{}))
				q.Push(tk)
				model = append(model, tk)
			case 1:
				tk, _ := NewTask(Future[int](&dropCounter{}))
				other.Push(tk)
				otherModel = append(otherModel, tk)
			case 2:
				got := q.Pop()
				if len(model) == 0 {
					require.Nil(t, got)
					continue
				}
				require.Same(t, model[0], got)
				model = model[1:]
			case 3:
				q.PushAll(&other)
				model = append(model, otherModel...)
				otherModel = nil
			}
			require.Equal(t, len(model), q.Len())
			require.Equal(t, len(otherModel), other.Len())
		}
	})
}

func TestRegistryRecordsAWrongRegistrationNamingTheModule(t *testing.T) {
	m := ClockModule("test-clock-dup", "the first", nil, func(struct{}, ClockParams) (Clock, error) { return NewRealClock(), nil })
	Register(m)
	// The registry is process-wide: take the module and the refusals out
	// again so that a repeated run (go test -count=2) starts afresh.
	registry.RLock()
	before := len(registry.errs)
	registry.RUnlock()
	t.Cleanup(func() {
		registry.Lock()
		delete(registry.m[KindClock], m.Name)
		registry.errs = registry.errs[:before]
		registry.Unlock()
	})
	require.NoError(t, RegistrationErrors())

	assert.NotPanics(t, func() {
		Register(ClockModule("test-clock-dup", "the second", nil, func(struct{}, ClockParams) (Clock, error) { return nil, nil }))
		Register(Module{Kind: "gizmo", Name: "test-gizmo", New: m.New})
		Register(Module{Kind: KindClock, New: m.New})
		RegisterTimer[struct{}, Timer]("test-timer-nil-build", "", nil, nil)
	})
	err := RegistrationErrors()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `registering clock module "test-clock-dup": the name is already taken by another module (the first)`)
	assert.Contains(t, err.Error(), `registering gizmo module "test-gizmo": unknown kind (valid: driver, clock, timer, scheduler)`)
	assert.Contains(t, err.Error(), `registering clock module "": the name is empty`)
	assert.Contains(t, err.Error(), `registering timer module "test-timer-nil-build": no build function`)
	var re *RegistrationError
	require.True(t, errors.As(err, &re))
	got, err := Lookup(KindClock, "test-clock-dup")
	require.NoError(t, err)
	assert.Equal(t, "the first", got.Doc, "the first registration of a name stays")
	_, err = Lookup(KindTimer, "test-timer-nil-build")
	require.Error(t, err)

	_, err = Lookup(KindClock, "nope")
	var ue *UnknownModuleError
	require.True(t, errors.As(err, &ue))
	assert.Contains(t, err.Error(), "real")
	assert.Contains(t, err.Error(), "test-clock-dup")
}
