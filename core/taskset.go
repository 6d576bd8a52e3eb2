package core

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// TaskSet is the set of live tasks of one runtime (Tokio's OwnedTasks). A
// task is bound into the set when it is spawned and leaves it when it
// completes, so at shutdown the runtime can cancel every task, including
// those parked on a waker that no queue holds. The set is sharded by task ID
// so that workers spawning and completing tasks rarely meet on a lock.
//
// # Closing
//
// [TaskSet.Close] sets a closed bit under every shard lock. A Bind that runs
// after it fails, so no task can join the set once [TaskSet.ShutdownAll] has
// started; a Bind that ran before it put its task where ShutdownAll finds it.
// A scheduler must also close its own global queue (see the Scheduler
// documentation): a wake that reaches a closed queue cancels the task
// instead of queueing it.
type TaskSet struct {
	// shards, mask and hooks are read on every spawn and completion and
	// never written after NewTaskSet. Nothing here is written per task:
	// a set-wide counter of live tasks, bumped by every worker, would put
	// these read-mostly fields on a cache line that two workers keep
	// stealing from each other (measured: a third of the cost of spawning
	// and completing a short task on two workers). Each shard counts its
	// own tasks, under its lock.
	shards []taskShard
	mask   uint64
	hooks  *TaskHooks
	closed atomic.Bool
}

type taskShard struct {
	mu     sync.Mutex
	head   *Task
	closed bool
	n      int      // live tasks in the shard
	_      [32]byte // keep shards on separate cache lines
}

// TaskHooks are callbacks run for task events. They run on the goroutine
// that caused the event and must not block.
type TaskHooks struct {
	// OnSpawn runs when a task is bound to the runtime.
	OnSpawn func(TaskID)
	// OnTerminate runs when a task completes, is cancelled or panics.
	OnTerminate func(TaskID)
	// OnPanic runs when a task's future panicked. The runtime uses it to
	// shut down on an unhandled panic when so configured.
	OnPanic func(*JoinError)
}

// NewTaskSet returns an empty, open set. hooks may be nil.
func NewTaskSet(hooks *TaskHooks) *TaskSet {
	n := 1
	for n < 4*runtime.GOMAXPROCS(0) {
		n <<= 1
	}
	if hooks == nil {
		hooks = &TaskHooks{}
	}
	return &TaskSet{shards: make([]taskShard, n), mask: uint64(n - 1), hooks: hooks}
}

// Bind adds t to the set. It returns [ErrShutdown] when the set is closed;
// the caller then rejects the task.
func (s *TaskSet) Bind(t *Task) error {
	sh := &s.shards[uint64(t.id)&s.mask]
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return ErrShutdown
	}
	t.set = s
	t.setNext = sh.head
	if sh.head != nil {
		sh.head.setPrev = t
	}
	sh.head = t
	sh.n++
	sh.mu.Unlock()
	if f := s.hooks.OnSpawn; f != nil {
		f(t.id)
	}
	return nil
}

// remove takes a completed task out of its shard.
func (s *TaskSet) remove(t *Task) {
	sh := &s.shards[uint64(t.id)&s.mask]
	sh.mu.Lock()
	if t.setPrev != nil {
		t.setPrev.setNext = t.setNext
	} else if sh.head == t {
		sh.head = t.setNext
	}
	if t.setNext != nil {
		t.setNext.setPrev = t.setPrev
	}
	t.setPrev, t.setNext = nil, nil
	sh.n--
	sh.mu.Unlock()
	if f := s.hooks.OnTerminate; f != nil {
		f(t.id)
	}
}

func (s *TaskSet) panicked(e *JoinError) {
	if f := s.hooks.OnPanic; f != nil {
		f(e)
	}
}

// Len returns the number of live tasks. It locks each shard in turn, so
// it is exact only when no task is spawned or completes meanwhile.
func (s *TaskSet) Len() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		n += sh.n
		sh.mu.Unlock()
	}
	return n
}

// IsClosed reports whether Close has been called.
func (s *TaskSet) IsClosed() bool { return s.closed.Load() }

// Close stops the set from accepting tasks. It reports whether this call
// closed it (false if it was already closed).
func (s *TaskSet) Close() bool {
	if !s.closed.CompareAndSwap(false, true) {
		return false
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		sh.closed = true
		sh.mu.Unlock()
	}
	return true
}

// ShutdownAll closes the set and cancels every task in it, starting at
// shard start (workers shutting down in parallel pass different starts). A
// task running on another goroutine is marked and cancelled by its poller.
// It returns when no shard holds a task that it could cancel itself.
func (s *TaskSet) ShutdownAll(start int) {
	s.Close()
	n := len(s.shards)
	for i := 0; i < n; i++ {
		sh := &s.shards[(start+i)%n]
		for {
			sh.mu.Lock()
			t := sh.head
			// Skip tasks that another goroutine is finishing: those running
			// elsewhere and already marked (their poller cancels them when
			// its poll returns) and those completing right now.
			for t != nil && !t.state.shutdownCandidate() {
				t = t.setNext
			}
			sh.mu.Unlock()
			if t == nil {
				break
			}
			t.shutdown()
		}
	}
}
