package bench

import (
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// The spawn workloads:
//
//	W1 spawn_local    inside one task, spawn n tasks; each increments an
//	                  atomic counter; the last one signals done. ns/task.
//	W2 spawn_remote   from a goroutine outside the runtime, spawn n tasks;
//	                  wait for the last. ns/task.
//	W5 chained_spawn  each task spawns the next, n deep; the last signals
//	                  done. ns/spawn.
//
// Spawned tasks are detached: their join handles are dropped unread, as a
// program spawning fire-and-forget work does.

// incr is the task of W1 and W2. A struct of one pointer is stored in an
// interface without an allocation of its own, so the task's cell is the
// only allocation per spawn.
type incr struct{ c *counter }

func (f incr) Poll(cx *core.Context) (core.Unit, bool) {
	f.c.add(cx)
	return core.Unit{}, true
}

// spawnLocal is W1's root task: it spawns n incr tasks from its first poll
// and then awaits the counter.
type spawnLocal struct {
	n       int
	c       *counter
	spawned bool
}

func (s *spawnLocal) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.spawned {
		s.spawned = true
		for range s.n {
			core.Spawn(cx, core.Future[core.Unit](incr{s.c}))
		}
	}
	return s.c.Poll(cx)
}

func weftSpawnLocal(r *rt.Runtime, n int) (float64, error) {
	start := time.Now()
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnLocal{n: n, c: newCounter(n)}))
	return perOp(time.Since(start), n), err
}

func goSpawnLocal(n int) (float64, error) {
	c := newGoCounter(n)
	start := time.Now()
	for range n {
		go c.add()
	}
	<-c.done
	return perOp(time.Since(start), n), nil
}

// weftSpawnRemote spawns from a goroutine of its own through the runtime's
// handle while the calling goroutine blocks on the counter (with a
// current-thread scheduler, that goroutine is the one running the tasks).
func weftSpawnRemote(r *rt.Runtime, n int) (float64, error) {
	c := newCounter(n)
	h := r.Handle()
	start := time.Now()
	go func() {
		for range n {
			rt.Spawn(h, core.Future[core.Unit](incr{c}))
		}
	}()
	_, err := rt.BlockOn(r, core.Future[core.Unit](c))
	return perOp(time.Since(start), n), err
}

func goSpawnRemote(n int) (float64, error) {
	c := newGoCounter(n)
	start := time.Now()
	go func() {
		for range n {
			go c.add()
		}
	}()
	<-c.done
	return perOp(time.Since(start), n), nil
}

// link is one task of W5's chain: it spawns the next link, or, as the last
// one, signals done.
type link struct {
	left int // links still to spawn after this one
	c    *counter
}

func (l *link) Poll(cx *core.Context) (core.Unit, bool) {
	if l.left == 0 {
		l.c.add(cx)
	} else {
		core.Spawn(cx, core.Future[core.Unit](&link{left: l.left - 1, c: l.c}))
	}
	return core.Unit{}, true
}

// chainRoot spawns the first link and awaits the last.
type chainRoot struct {
	n       int
	c       *counter
	spawned bool
}

func (s *chainRoot) Poll(cx *core.Context) (core.Unit, bool) {
	if !s.spawned {
		s.spawned = true
		core.Spawn(cx, core.Future[core.Unit](&link{left: s.n - 1, c: s.c}))
	}
	return s.c.Poll(cx)
}

func weftChainedSpawn(r *rt.Runtime, n int) (float64, error) {
	start := time.Now()
	_, err := rt.BlockOn(r, core.Future[core.Unit](&chainRoot{n: n, c: newCounter(1)}))
	return perOp(time.Since(start), n), err
}

func goChainedSpawn(n int) (float64, error) {
	c := newGoCounter(1)
	var next func(left int)
	next = func(left int) {
		if left == 0 {
			c.add()
			return
		}
		go next(left - 1)
	}
	start := time.Now()
	go next(n - 1)
	<-c.done
	return perOp(time.Since(start), n), nil
}

// perOp is el in nanoseconds per operation.
func perOp(el time.Duration, n int) float64 {
	return float64(el.Nanoseconds()) / float64(n)
}
