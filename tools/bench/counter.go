package bench

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// counter is how the tasks of a weft workload tell the root task waiting
// for them that they are all done: each adds one, and the one that brings
// the count to n wakes the root. The root awaits the counter as a future.
//
// The wake cannot be lost: the root registers its waker and then loads the
// count; the last task adds and then takes the waker. Both sides go through
// the AtomicWaker's mutex, so either the task takes the registered waker
// or the root's load, ordered after the task's add, sees the count at n.
type counter struct {
	n     int64
	count atomic.Int64
	root  core.AtomicWaker
}

func newCounter(n int) *counter { return &counter{n: int64(n)} }

// add counts one from inside the poll of cx; the last add wakes the root,
// through cx so the scheduler may run it on the calling worker.
func (c *counter) add(cx *core.Context) {
	if c.count.Add(1) == c.n {
		if w := c.root.Take(); w != nil {
			cx.Wake(w)
		}
	}
}

// Poll implements core.Future: ready once the count has reached n.
func (c *counter) Poll(cx *core.Context) (core.Unit, bool) {
	if c.count.Load() == c.n {
		return core.Unit{}, true
	}
	c.root.Register(cx.Waker())
	return core.Unit{}, c.count.Load() == c.n
}

// goCounter is the plain-Go counterpart: the goroutine that brings the
// count to n closes done.
type goCounter struct {
	n     int64
	count atomic.Int64
	done  chan struct{}
}

func newGoCounter(n int) *goCounter { return &goCounter{n: int64(n), done: make(chan struct{})} }

func (c *goCounter) add() {
	if c.count.Add(1) == c.n {
		close(c.done)
	}
}
