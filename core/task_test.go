package core

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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
	if h1.ID() >= h2.ID() {
		t.Errorf("the second task's ID is %d, want more than the first's, %d", h2.ID(), h1.ID())
	}
	if len(s.queued) != 2 {
		t.Errorf("%d tasks queued, want 2", len(s.queued))
	}
}

func TestWakeWhileQueuedDoesNotQueueAgain(t *testing.T) {
	s := &manualSched{}
	h := spawnManual(s, Future[int](PollFunc[int](func(*Context) (int, bool) { return 0, false })))
	h.Task().Wake()
	h.Task().Wake()
	if len(s.queued) != 1 {
		t.Errorf("%d tasks queued after two wakes, want 1: NOTIFIED already set, no second queueing", len(s.queued))
	}
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
	if !tk.run(cx) {
		t.Errorf("run of a task woken during its poll returned false, want true: the caller must re-queue")
	}
	if len(s.queued) != 0 {
		t.Errorf("%d tasks queued, want none: the wake itself queues nothing", len(s.queued))
	}
	if h.IsFinished() {
		t.Errorf("a task whose poll was pending is finished")
	}
}

func TestIdleTaskWokenIsQueued(t *testing.T) {
	s := &manualSched{}
	var w Waker
	spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) { w = cx.Waker(); return 0, false })))
	if s.pop().run(newWorkerContext(nil)) {
		t.Errorf("run of a task not woken during its poll returned true, want false")
	}
	w.Wake()
	if len(s.queued) != 1 {
		t.Errorf("%d tasks queued after waking the idle task, want 1", len(s.queued))
	}
}

func TestCompletedTaskIgnoresWakesAndRuns(t *testing.T) {
	s := &manualSched{}
	polls := 0
	var w Waker
	h := spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) { polls++; w = cx.Waker(); return 5, true })))
	tk := s.pop()
	tk.run(newWorkerContext(nil))
	w.Wake()
	if len(s.queued) != 0 {
		t.Errorf("waking a completed task queued %d tasks, want none", len(s.queued))
	}
	tk.run(newWorkerContext(nil))
	if polls != 1 {
		t.Errorf("the future was polled %d times, want 1: a completed task's run does nothing", polls)
	}
	res, ok := h.Poll(NewContext(nil))
	if !ok {
		t.Fatalf("the handle of a completed task is pending")
	}
	if res.Value != 5 {
		t.Errorf("the handle's value is %d, want 5", res.Value)
	}
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
	if len(s.queued) != 1 {
		t.Fatalf("%d tasks queued after aborting an idle task, want 1: it is queued so a worker cancels it", len(s.queued))
	}
	s.pop().run(newWorkerContext(nil))
	if f.drops != 1 {
		t.Errorf("the aborted future was dropped %d times, want 1", f.drops)
	}
	if f.polls != 1 {
		t.Errorf("the aborted future was polled %d times, want 1 (only before the abort)", f.polls)
	}
	res, ok := h.Poll(NewContext(nil))
	if !ok {
		t.Fatalf("the handle of a cancelled task is pending")
	}
	if !errors.Is(res.Err, ErrAborted) {
		t.Errorf("the handle's error is %v, want one that is ErrAborted", res.Err)
	}
	if !IsCancelled(res.Err) {
		t.Errorf("IsCancelled(%v) is false, want true", res.Err)
	}
}

func TestAbortDuringPollCancelsAfterThePoll(t *testing.T) {
	s := &manualSched{}
	f := &dropCounter{}
	var h *JoinHandle[int]
	h = spawnManual(s, Future[int](PollFunc[int](func(cx *Context) (int, bool) {
		h.Abort()
		return f.Poll(cx)
	})))
	if s.pop().run(newWorkerContext(nil)) {
		t.Errorf("run of a task aborted during its poll returned true, want false")
	}
	if !h.IsFinished() {
		t.Errorf("a task aborted during its poll is not finished after the poll")
	}
	if len(s.queued) != 0 {
		t.Errorf("%d tasks queued, want none", len(s.queued))
	}
}

func TestPanicBecomesAJoinErrorAndDropsTheFuture(t *testing.T) {
	s := &manualSched{}
	d := &dropCounter{}
	h := spawnManual(s, Future[int](&panicky{d}))
	s.pop().run(newWorkerContext(nil))
	res, ok := h.Poll(NewContext(nil))
	if !ok {
		t.Fatalf("the handle of a panicked task is pending")
	}
	var je *JoinError
	if !errors.As(res.Err, &je) {
		t.Fatalf("the handle's error is %v (%T), want a *JoinError", res.Err, res.Err)
	}
	if !je.IsPanic() {
		t.Errorf("IsPanic of the panicked task's JoinError is false, want true")
	}
	if je.PanicValue() != "kaboom" {
		t.Errorf("the panic value is %#v, want \"kaboom\"", je.PanicValue())
	}
	if len(je.Stack()) == 0 {
		t.Errorf("the JoinError of a panic has an empty stack")
	}
	if d.drops != 1 {
		t.Errorf("the panicked future was dropped %d times, want 1", d.drops)
	}
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
	if _, ok := h.Poll(NewContext(first)); ok {
		t.Fatalf("the handle is ready before its task has run")
	}
	if _, ok := h.Poll(NewContext(second)); ok {
		t.Fatalf("the handle is ready before its task has run")
	}
	s.pop().run(newWorkerContext(nil))
	release = true
	w.Wake()
	s.pop().run(newWorkerContext(nil))
	if n := first.n.Load(); n != 0 {
		t.Errorf("the replaced waker was woken %d times, want 0", n)
	}
	if n := second.n.Load(); n != 1 {
		t.Errorf("the registered waker was woken %d times, want 1", n)
	}
	res, ok := h.Poll(NewContext(second))
	if !ok {
		t.Fatalf("the handle of a completed task is pending")
	}
	if res.Value != 3 {
		t.Errorf("the handle's value is %d, want 3", res.Value)
	}
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
			if n := last.n.Load(); n != 1 {
				t.Fatalf("round %d: the registered waker was woken %d times, want 1", round, n)
			}
		}
		if _, ok := h.Poll(NewContext(nil)); !ok {
			t.Fatalf("round %d: the handle is pending after its task completed", round)
		}
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
		if err := set.Bind(tk); err != nil {
			t.Fatalf("binding task %d to an open set: %v", i, err)
		}
		s.Schedule(tk, nil)
		fs, hs = append(fs, f), append(hs, h)
	}
	// Run half so they are idle; the rest stay queued.
	for i := 0; i < 5; i++ {
		s.pop().run(newWorkerContext(nil))
	}
	if n := set.Len(); n != 10 {
		t.Errorf("the set holds %d tasks, want 10", n)
	}
	set.ShutdownAll(0)
	if n := set.Len(); n != 0 {
		t.Errorf("after ShutdownAll the set holds %d tasks, want 0", n)
	}
	for i, h := range hs {
		res, ok := h.Poll(NewContext(nil))
		if !ok {
			t.Fatalf("task %d: the handle is pending after ShutdownAll", i)
		}
		if !errors.Is(res.Err, ErrShutdown) {
			t.Errorf("task %d: the handle's error is %v, want one that is ErrShutdown", i, res.Err)
		}
		if fs[i].drops != 1 {
			t.Errorf("task %d: the future was dropped %d times, want 1", i, fs[i].drops)
		}
	}
	// Queued tasks that were cancelled are skipped by Run.
	for tk := s.pop(); tk != nil; tk = s.pop() {
		if tk.run(newWorkerContext(nil)) {
			t.Errorf("run of a cancelled queued task returned true, want false")
		}
	}
	tk, _ := NewTask(Future[int](&dropCounter{}))
	if err := set.Bind(tk); !errors.Is(err, ErrShutdown) {
		t.Errorf("Bind to a closed set returned %v, want ErrShutdown: a closed set refuses tasks", err)
	}
}

func TestRejectResolvesTheHandleWithTheCauseAndDrops(t *testing.T) {
	f := &dropCounter{}
	tk, h := NewTask(Future[int](f))
	cause := errors.New("no room")
	tk.reject(cause)
	res, ok := h.Poll(NewContext(nil))
	if !ok {
		t.Fatalf("the handle of a rejected task is pending")
	}
	if !errors.Is(res.Err, cause) {
		t.Errorf("the handle's error is %v, want one that is the cause %v", res.Err, cause)
	}
	if f.drops != 1 {
		t.Errorf("the rejected future was dropped %d times, want 1", f.drops)
	}
}

func TestBudgetIsExhaustedAfterBudgetUnitsAndWakes(t *testing.T) {
	cx := newWorkerContext(nil)
	w := &countWaker{}
	cx.waker = w
	cx.resetBudget()
	for i := 0; i < Budget; i++ {
		if !cx.Proceed() {
			t.Fatalf("Proceed refused unit %d of a budget of %d", i+1, Budget)
		}
	}
	if cx.Proceed() {
		t.Errorf("Proceed allowed unit %d of a budget of %d", Budget+1, Budget)
	}
	if n := w.n.Load(); n != 1 {
		t.Errorf("the task was woken %d times on exhaustion, want 1", n)
	}
	if n := cx.BudgetExhaustions(); n != 1 {
		t.Errorf("BudgetExhaustions is %d, want 1", n)
	}
	if !NewContext(nil).Proceed() {
		t.Errorf("Proceed outside a runtime returned false, want true: the budget is unconstrained there")
	}
}

func TestYieldIsPendingOnceThenReady(t *testing.T) {
	w := &countWaker{}
	cx := NewContext(w)
	y := Yield()
	if _, ok := y.Poll(cx); ok {
		t.Errorf("the first poll of Yield is ready, want pending")
	}
	if n := w.n.Load(); n != 1 {
		t.Errorf("the waker was woken %d times, want 1: outside a runtime the deferred wake is immediate", n)
	}
	if _, ok := y.Poll(cx); !ok {
		t.Errorf("the second poll of Yield is pending, want ready")
	}
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
	if n := r.Len(); n != 0 {
		t.Errorf("the queue pushed from holds %d tasks after PushAll, want 0", n)
	}
	q.Push(ts[4])
	if n := q.Len(); n != 5 {
		t.Errorf("the queue holds %d tasks, want 5", n)
	}
	for i := 0; i < 5; i++ {
		if got := q.Pop(); got != ts[i] {
			t.Errorf("pop %d gave %p, want task %d (%p)", i, got, i, ts[i])
		}
	}
	if got := q.Pop(); got != nil {
		t.Errorf("pop of an empty queue gave %p, want nil", got)
	}
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
					if got != nil {
						t.Fatalf("pop of an empty queue gave %p, want nil", got)
					}
					continue
				}
				if got != model[0] {
					t.Fatalf("pop gave %p, want the oldest task %p", got, model[0])
				}
				model = model[1:]
			case 3:
				q.PushAll(&other)
				model = append(model, otherModel...)
				otherModel = nil
			}
			if q.Len() != len(model) {
				t.Fatalf("the queue's Len is %d, want %d", q.Len(), len(model))
			}
			if other.Len() != len(otherModel) {
				t.Fatalf("the other queue's Len is %d, want %d", other.Len(), len(otherModel))
			}
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
	if err := RegistrationErrors(); err != nil {
		t.Fatalf("RegistrationErrors before any wrong registration: %v", err)
	}

	wantNoPanic(t, "a wrong registration", func() {
		Register(ClockModule("test-clock-dup", "the second", nil, func(struct{}, ClockParams) (Clock, error) { return nil, nil }))
		Register(Module{Kind: "gizmo", Name: "test-gizmo", New: m.New})
		Register(Module{Kind: KindClock, New: m.New})
		RegisterTimer[struct{}, Timer]("test-timer-nil-build", "", nil, nil)
	})
	err := RegistrationErrors()
	if err == nil {
		t.Fatalf("RegistrationErrors after four wrong registrations is nil")
	}
	for _, want := range []string{
		`registering clock module "test-clock-dup": the name is already taken by another module (the first)`,
		`registering gizmo module "test-gizmo": unknown kind (valid: driver, clock, timer, scheduler)`,
		`registering clock module "": the name is empty`,
		`registering timer module "test-timer-nil-build": no build function`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("RegistrationErrors is %q, want it to contain %q", err, want)
		}
	}
	var re *RegistrationError
	if !errors.As(err, &re) {
		t.Fatalf("RegistrationErrors is %v (%T), want a *RegistrationError in it", err, err)
	}
	got, err := Lookup(KindClock, "test-clock-dup")
	if err != nil {
		t.Fatalf("Lookup of the first registered test-clock-dup: %v", err)
	}
	if got.Doc != "the first" {
		t.Errorf("test-clock-dup's doc is %q, want %q: the first registration of a name stays", got.Doc, "the first")
	}
	if _, err := Lookup(KindTimer, "test-timer-nil-build"); err == nil {
		t.Fatalf("Lookup of a timer refused for having no build function found it")
	}

	_, err = Lookup(KindClock, "nope")
	var ue *UnknownModuleError
	if !errors.As(err, &ue) {
		t.Fatalf("Lookup of an unknown clock returned %v (%T), want an *UnknownModuleError", err, err)
	}
	for _, want := range []string{"real", "test-clock-dup"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the unknown-module error is %q, want it to name %q", err, want)
		}
	}
}
