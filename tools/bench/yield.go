package bench

import (
	"runtime"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// W3 yield_many: yieldTasks tasks each yield n times (the specification's
// n is yieldsPerTask); ns per yield. A scaled run keeps the 200 tasks and
// scales the yields of each.
const (
	yieldTasks    = 200
	yieldsPerTask = 1_000
)

// yielder yields left times through core.Yield, then signals done.
type yielder struct {
	left int
	y    core.Future[core.Unit]
	c    *counter
}

func (f *yielder) Poll(cx *core.Context) (core.Unit, bool) {
	for {
		if f.y != nil {
			if _, ok := f.y.Poll(cx); !ok {
				return core.Unit{}, false
			}
			f.y = nil
		}
		if f.left == 0 {
			f.c.add(cx)
			return core.Unit{}, true
		}
		f.left--
		f.y = core.Yield()
	}
}

// spawnAll is a root task that spawns fs from its first poll and awaits
// the counter they signal.
type spawnAll struct {
	fs []core.Future[core.Unit]
	c  *counter
}

func (s *spawnAll) Poll(cx *core.Context) (core.Unit, bool) {
	if s.fs != nil {
		for _, f := range s.fs {
			core.Spawn(cx, f)
		}
		s.fs = nil
	}
	return s.c.Poll(cx)
}

func weftYieldMany(r *rt.Runtime, n int) (float64, error) {
	c := newCounter(yieldTasks)
	start := time.Now()
	fs := make([]core.Future[core.Unit], yieldTasks)
	for i := range fs {
		fs[i] = &yielder{left: n, c: c}
	}
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnAll{fs: fs, c: c}))
	return perOp(time.Since(start), yieldTasks*n), err
}

func goYieldMany(n int) (float64, error) {
	c := newGoCounter(yieldTasks)
	start := time.Now()
	for range yieldTasks {
		go func() {
			for range n {
				runtime.Gosched()
			}
			c.add()
		}()
	}
	<-c.done
	return perOp(time.Since(start), yieldTasks*n), nil
}
