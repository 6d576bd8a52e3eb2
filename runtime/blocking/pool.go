package blocking

import (
	"context"
	"fmt"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// Defaults applied by [New] to the zero fields of a [Config].
const (
	// DefaultMaxThreads is the goroutine cap, Tokio's default for its
	// blocking threads. It suits jobs that mostly wait (file I/O); bound
	// CPU-heavy jobs with a semaphore of their own.
	DefaultMaxThreads = 512
	// DefaultKeepAlive is how long an idle goroutine waits for work before
	// it exits.
	DefaultKeepAlive = 10 * time.Second
	// DefaultName names a pool whose Config has no Name.
	DefaultName = "weft-blocking"
)

// Config configures a [Pool]. A zero field means its default.
type Config struct {
	// MaxThreads is the most pool goroutines that may exist at once, busy
	// or idle. Zero means DefaultMaxThreads; it must not be negative.
	MaxThreads int
	// KeepAlive is how long a goroutine stays idle before it exits. Zero
	// means DefaultKeepAlive; it must not be negative.
	KeepAlive time.Duration
	// Name appears in errors and, as the pprof label "weft.blocking", on
	// every goroutine of the pool. Empty means DefaultName.
	Name string
}

// Validate reports the first invalid field of c, naming it.
func (c Config) Validate() error {
	if c.MaxThreads < 0 {
		return fmt.Errorf("weft: blocking pool config MaxThreads: must be >= 0 (0 means %d), got %d",
			DefaultMaxThreads, c.MaxThreads)
	}
	if c.KeepAlive < 0 {
		return fmt.Errorf("weft: blocking pool config KeepAlive: must be >= 0 (0 means %v), got %v",
			DefaultKeepAlive, c.KeepAlive)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.MaxThreads == 0 {
		c.MaxThreads = DefaultMaxThreads
	}
	if c.KeepAlive == 0 {
		c.KeepAlive = DefaultKeepAlive
	}
	if c.Name == "" {
		c.Name = DefaultName
	}
	return c
}

// Pool runs blocking jobs on a bounded, self-sizing set of goroutines. See
// the package documentation for its queue, keep-alive and shutdown rules.
// A Pool is safe for use by any number of goroutines. It must be created
// with [New].
type Pool struct {
	cfg Config
	// sched is the core.Scheduler every job's task is bound to; its
	// Schedule pushes to this pool's queue.
	sched scheduler
	// errShutdown is what refused spawns return: ErrShutdown, wrapped with
	// the pool's name.
	errShutdown error
	// labels carry the pool's name to pprof for each of its goroutines,
	// Go's nearest thing to a thread name.
	labels context.Context

	mu sync.Mutex
	// queue holds jobs that no goroutine has taken yet, oldest first.
	queue core.TaskQueue
	// idle is the stack of parked goroutines, newest on top. A goroutine
	// is on it exactly while it is parked and not yet notified, so its
	// length is the idle count.
	idle []*idler
	// numThreads counts goroutines started and not yet exited, busy or
	// idle. It is never above cfg.MaxThreads.
	numThreads int
	// shutdown is set once by Shutdown; no job is queued after it.
	shutdown bool
	// closing is closed by Shutdown to wake every parked goroutine.
	closing chan struct{}
	// flushed is closed by the first Shutdown once it has cancelled the
	// jobs it took off the queue, so that every caller of Shutdown returns
	// only after those handles have resolved.
	flushed chan struct{}
	// done is closed, under mu, when shutdown is set and numThreads is
	// zero: by Shutdown if no goroutine existed, else by the last one out.
	done chan struct{}
}

// idler is a pool goroutine's parking place, reused for each time it idles.
type idler struct {
	// wake receives the token of a hand-off. Its capacity of one is enough:
	// a hand-off pops the idler off the stack, and the goroutine empties
	// the channel before it parks again.
	wake chan struct{}
	// notified is set, under Pool.mu, by the submitter that popped this
	// idler. It, not the token, decides whether the goroutine goes back to
	// work: a token can lose the race against the keep-alive timer, the
	// mark cannot.
	notified bool
	timer    *time.Timer
}

// New returns a pool configured by cfg, with no goroutines yet: they are
// started as jobs arrive. New panics if cfg is invalid (see
// [Config.Validate]); validate configuration from users first.
func New(cfg Config) *Pool {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	cfg = cfg.withDefaults()
	p := &Pool{
		cfg:         cfg,
		errShutdown: fmt.Errorf("weft: blocking pool %q: %w", cfg.Name, core.ErrShutdown),
		labels:      pprof.WithLabels(context.Background(), pprof.Labels("weft.blocking", cfg.Name)),
		closing:     make(chan struct{}),
		flushed:     make(chan struct{}),
		done:        make(chan struct{}),
	}
	p.sched.p = p
	return p
}

// Config returns the pool's configuration with defaults filled in.
func (p *Pool) Config() Config { return p.cfg }

// NumThreads returns how many pool goroutines exist, busy or idle.
func (p *Pool) NumThreads() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.numThreads
}

// IdleThreads returns how many pool goroutines are parked waiting for work
// and have not been handed any.
func (p *Pool) IdleThreads() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.idle)
}

// QueueDepth returns how many jobs are queued and not yet taken by a
// goroutine.
func (p *Pool) QueueDepth() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.queue.Len()
}

// submit queues t and makes sure a goroutine will take it. It returns
// p.errShutdown, leaving t untouched, when the pool is shut down.
func (p *Pool) submit(t *core.Task) error {
	p.mu.Lock()
	if p.shutdown {
		p.mu.Unlock()
		return p.errShutdown
	}
	p.queue.Push(t)
	if !p.wakeIdleLocked() && p.numThreads < p.cfg.MaxThreads {
		p.numThreads++
		go p.work()
	}
	// Otherwise every goroutine is busy (or already notified) and each
	// drains the queue before it parks: the job waits its turn.
	p.mu.Unlock()
	return nil
}

// wakeIdleLocked hands work to the newest idle goroutine: it pops it off the
// stack, marks it notified and sends it a token. It reports false when no
// goroutine is idle. p.mu must be held.
func (p *Pool) wakeIdleLocked() bool {
	n := len(p.idle)
	if n == 0 {
		return false
	}
	w := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	w.notified = true
	// Never blocks: see idler.wake.
	w.wake <- struct{}{}
	return true
}

// work is the body of a pool goroutine.
func (p *Pool) work() {
	pprof.SetGoroutineLabels(p.labels)
	w := &idler{wake: make(chan struct{}, 1)}
	cx := core.NewContext(nil)
	p.mu.Lock()
	for {
		for !p.shutdown {
			t := p.queue.Pop()
			if t == nil {
				break
			}
			p.mu.Unlock()
			if spi.Run(t, cx) {
				// Only a task that wakes itself while it is polled gets
				// here; a job finishes in one poll. Queue it again.
				p.sched.Schedule(t, nil)
			}
			p.mu.Lock()
		}
		if p.shutdown || !p.parkLocked(w) {
			break
		}
	}
	p.numThreads--
	if p.shutdown && p.numThreads == 0 {
		close(p.done)
	}
	p.mu.Unlock()
}

// parkLocked waits, without p.mu, until w is handed work, its keep-alive
// expires or the pool shuts down. It is called and returns with p.mu held,
// and reports whether w was handed work.
func (p *Pool) parkLocked(w *idler) bool {
	w.notified = false
	p.idle = append(p.idle, w)
	p.mu.Unlock()

	if w.timer == nil {
		w.timer = time.NewTimer(p.cfg.KeepAlive)
	} else {
		w.timer.Reset(p.cfg.KeepAlive)
	}
	select {
	case <-w.wake:
	case <-w.timer.C:
	case <-p.closing:
	}
	w.timer.Stop()

	p.mu.Lock()
	if w.notified {
		// A submitter popped w and sent its token under p.mu, so the token
		// is in the channel unless the select took it. Empty the channel
		// for the next park.
		select {
		case <-w.wake:
		default:
		}
		return true
	}
	// Keep-alive expired or shutdown began; w is still on the stack.
	for i := len(p.idle) - 1; i >= 0; i-- {
		if p.idle[i] == w {
			copy(p.idle[i:], p.idle[i+1:])
			p.idle[len(p.idle)-1] = nil
			p.idle = p.idle[:len(p.idle)-1]
			break
		}
	}
	return false
}

// Shutdown closes the pool to new jobs, resolves the handles of queued jobs
// as cancelled with [core.ErrShutdown] without running them, and waits for
// running jobs to finish. A negative timeout waits as long as it takes; zero
// does not wait. It reports whether every pool goroutine had exited when it
// returned. Shutdown is idempotent; see the package documentation.
func (p *Pool) Shutdown(timeout time.Duration) bool {
	var dropped core.TaskQueue
	p.mu.Lock()
	first := !p.shutdown
	if first {
		p.shutdown = true
		dropped.PushAll(&p.queue)
		close(p.closing)
		if p.numThreads == 0 {
			close(p.done)
		}
	}
	p.mu.Unlock()

	if first {
		// Outside the lock: resolving a handle wakes its waiter, which may
		// call back into the pool.
		for t := dropped.Pop(); t != nil; t = dropped.Pop() {
			spi.Shutdown(t)
		}
		close(p.flushed)
	} else {
		<-p.flushed
	}

	switch {
	case timeout < 0:
		<-p.done
		return true
	case timeout == 0:
		select {
		case <-p.done:
			return true
		default:
			return false
		}
	default:
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-p.done:
			return true
		case <-timer.C:
			return false
		}
	}
}
