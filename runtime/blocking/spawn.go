package blocking

import (
	"errors"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// Spawn runs f on a goroutine of p and returns a handle to its result. The
// handle is an ordinary [core.JoinHandle]: a task awaits it like any other,
// and it resolves with f's return value, or with a [core.JoinError] when f
// panicked (IsPanic), was aborted before it started, or was refused or
// dropped by a pool that shut down (IsCancelled, wrapping
// [core.ErrShutdown]). f is called at most once. Spawn never blocks: when the
// pool is at its goroutine cap the job waits in the queue. Spawn panics if f
// is nil.
//
// Aborting the handle before f starts prevents it; aborting it afterwards
// has no effect and the handle still gets f's value.
func Spawn[T any](p *Pool, f func() T) *core.JoinHandle[T] {
	if f == nil {
		panic("weft: blocking.Spawn called with a nil function")
	}
	t, h := core.NewTask[T](&job[T]{f: f})
	if err := p.sched.Spawn(t, nil); err != nil {
		spi.Reject(t, err)
	}
	return h
}

// errNilFunc is what SpawnBlockingFunc returns for a nil function.
var errNilFunc = errors.New("weft: blocking pool: SpawnBlockingFunc called with a nil function")

// SpawnBlockingFunc runs f on a goroutine of p and does not report its end.
// It implements [core.BlockingSpawner]. It returns an error wrapping
// [core.ErrShutdown] when the pool has shut down (f is then never called),
// and an error when f is nil. A panic in f is recovered and discarded.
func (p *Pool) SpawnBlockingFunc(f func()) error {
	if f == nil {
		return errNilFunc
	}
	t, h := core.NewTask[core.Unit](funcJob(f))
	// Nobody will read the output.
	h.Drop()
	if err := p.sched.Spawn(t, nil); err != nil {
		spi.Reject(t, err)
		return err
	}
	return nil
}

var _ core.BlockingSpawner = (*Pool)(nil)

// job is the future of a Spawn job: it calls f on its first and only poll.
type job[T any] struct{ f func() T }

func (j *job[T]) Poll(*core.Context) (T, bool) {
	f := j.f
	j.f = nil
	return f(), true
}

// funcJob is the future of a SpawnBlockingFunc job.
type funcJob func()

func (f funcJob) Poll(*core.Context) (core.Unit, bool) {
	f()
	return core.Unit{}, true
}

// scheduler adapts a Pool to [core.Scheduler] so that its jobs are ordinary
// core tasks: spi.Run, Abort and JoinHandle all work unchanged. Only the
// pool itself spawns onto it.
type scheduler struct{ p *Pool }

var _ core.Scheduler = (*scheduler)(nil)

// Spawn binds t to the pool and queues it. It returns an error wrapping
// core.ErrShutdown, leaving t for the caller to reject, once the pool is
// shut down.
func (s *scheduler) Spawn(t *core.Task, _ core.Worker) error {
	spi.Bind(t, s)
	return s.p.submit(t)
}

// Schedule queues a task whose wake won the NOTIFIED transition. A job is
// queued once, at spawn, and finishes in one poll, so this runs only for a
// task that woke itself during its poll. Once the pool is shut down the task
// is cancelled instead.
func (s *scheduler) Schedule(t *core.Task, _ core.Worker) {
	if s.p.submit(t) != nil {
		spi.Shutdown(t)
	}
}

// BlockOn waits until done is closed or the pool shuts down. The pool's
// goroutines run its jobs by themselves, so the caller has nothing to drive.
func (s *scheduler) BlockOn(_ *core.Task, done <-chan struct{}) {
	select {
	case <-done:
	case <-s.p.closing:
	}
}

// Shutdown shuts the pool down and waits for its running jobs, as the
// Scheduler contract requires (no task is polled after it returns). The
// pool's owner normally calls Pool.Shutdown instead, with a timeout.
func (s *scheduler) Shutdown() { s.p.Shutdown(-1) }
