package co

import (
	"iter"
	"sync"
	"sync/atomic"
)

// job is what a coroutine runs: a coroutine task's body.
type job interface{ run() }

// coro is a reusable coroutine. Its goroutine runs loop: the job it is
// given, then a suspension that parks it (idle, in the pool) until the next
// job. Between jobs it holds nothing but its stack.
//
// Control passes with iter.Pull's switch: resume (next) runs the coroutine
// until it calls yield, and yield returns when resume is next called. At
// every moment exactly one of the resumer and the coroutine runs, so the
// fields below need no synchronisation beyond what the switch provides
// (it is a happens-before edge in both directions).
type coro struct {
	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	job   job
}

// resume runs j on the coroutine (starting it, or continuing it where it
// suspended) until it suspends again or finishes.
func (c *coro) resume(j job) {
	c.job = j
	c.next()
}

// loop is the coroutine's function: run the current job to the end, then
// suspend until the next one. A job that suspends in the middle (an Await)
// does so through c.yield as well; the job's own state tells the resumer
// which kind of suspension it was. loop returns (ending the goroutine) when
// the pool stops an idle coroutine.
func (c *coro) loop(yield func(struct{}) bool) {
	c.yield = yield
	for {
		c.job.run()
		c.job = nil
		if !yield(struct{}{}) {
			return
		}
	}
}

// pool holds idle coroutines. A mutex suffices: it is taken once when a
// coroutine task first runs and once when it ends, around a slice push or
// pop.
var pool struct {
	mu      sync.Mutex
	idle    []*coro
	maxIdle int
}

func init() { pool.maxIdle = 1024 }

// getCoro returns an idle coroutine, or a new one.
func getCoro() *coro {
	pool.mu.Lock()
	if n := len(pool.idle); n > 0 {
		c := pool.idle[n-1]
		pool.idle[n-1] = nil
		pool.idle = pool.idle[:n-1]
		pool.mu.Unlock()
		return c
	}
	pool.mu.Unlock()
	started.Add(1)
	c := new(coro)
	c.next, c.stop = iter.Pull(c.loop)
	return c
}

// started counts the coroutines ever started, for the tests of reuse.
var started atomic.Int64

// putCoro returns a coroutine whose job has finished to the pool, or ends
// it when the pool is full.
func putCoro(c *coro) {
	pool.mu.Lock()
	if len(pool.idle) < pool.maxIdle {
		pool.idle = append(pool.idle, c)
		pool.mu.Unlock()
		return
	}
	pool.mu.Unlock()
	c.stop()
}

// SetMaxIdle sets how many idle coroutines the pool keeps for reuse (1024
// by default; 0 keeps none, so every coroutine task starts a coroutine of
// its own) and returns the previous limit. Idle coroutines beyond the new
// limit are ended.
func SetMaxIdle(n int) int {
	if n < 0 {
		n = 0
	}
	pool.mu.Lock()
	prev := pool.maxIdle
	pool.maxIdle = n
	var extra []*coro
	if len(pool.idle) > n {
		extra = append(extra, pool.idle[n:]...)
		clear(pool.idle[n:])
		pool.idle = pool.idle[:n]
	}
	pool.mu.Unlock()
	for _, c := range extra {
		c.stop()
	}
	return prev
}

// ReleaseIdle ends every idle coroutine of the pool and returns how many
// it ended; their goroutines have exited when it returns. Coroutines of
// running tasks are unaffected and return to the pool when their tasks
// end. Tests that check for leaked goroutines call it first.
func ReleaseIdle() int {
	pool.mu.Lock()
	idle := pool.idle
	pool.idle = nil
	pool.mu.Unlock()
	for _, c := range idle {
		c.stop()
	}
	return len(idle)
}

// Idle reports how many idle coroutines the pool holds.
func Idle() int {
	pool.mu.Lock()
	defer pool.mu.Unlock()
	return len(pool.idle)
}
