// Package schedtest holds the test helpers that the scheduler kit's
// packages and the schedulers' own tests share: tasks that only queues
// see, overflows that record or refuse, filling and draining a run queue,
// and a driver wrapper that reports itself quiescent until I/O is
// registered. Only tests import it.
package schedtest

import (
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/runq"
)

// pending never completes.
type pending struct{}

func (pending) Poll(*core.Context) (core.Unit, bool) { return core.Unit{}, false }

// Tasks returns n tasks that nothing has spawned, as queues see a task:
// the queues only move pointers, so the tasks never run, and a task shut
// down by a queue reports IsComplete.
func Tasks(n int) []*core.Task {
	out := make([]*core.Task, n)
	for i := range out {
		out[i], _ = core.NewTask[core.Unit](pending{})
	}
	return out
}

// Recorder is a runq.Overflow that keeps what it is given, one entry per
// call.
type Recorder struct {
	Calls [][]*core.Task
}

// OverflowOne implements runq.Overflow.
func (r *Recorder) OverflowOne(t *core.Task) { r.Calls = append(r.Calls, []*core.Task{t}) }

// OverflowBatch implements runq.Overflow.
func (r *Recorder) OverflowBatch(b *core.TaskQueue) {
	var ts []*core.Task
	for t := b.Pop(); t != nil; t = b.Pop() {
		ts = append(ts, t)
	}
	r.Calls = append(r.Calls, ts)
}

// All returns every task the recorder was given, in order.
func (r *Recorder) All() []*core.Task {
	var out []*core.Task
	for _, c := range r.Calls {
		out = append(out, c...)
	}
	return out
}

// NoOverflow is a runq.Overflow that fails the test if anything
// overflows.
type NoOverflow struct{ T testing.TB }

// OverflowOne implements runq.Overflow.
func (o NoOverflow) OverflowOne(*core.Task) { o.T.Fatal("unexpected overflow") }

// OverflowBatch implements runq.Overflow.
func (o NoOverflow) OverflowBatch(*core.TaskQueue) { o.T.Fatal("unexpected overflow") }

// Fill pushes ts into q, each of which must fit.
func Fill(t testing.TB, q *runq.Queue, ts []*core.Task) {
	t.Helper()
	for i, x := range ts {
		if res, _ := q.Push(x, NoOverflow{t}); res != runq.Queued {
			t.Fatalf("push %d: %v, want Queued", i, res)
		}
	}
}

// Drain pops every task of q, oldest first.
func Drain(q *runq.Queue) []*core.Task {
	out := []*core.Task{}
	for t := q.Pop(); t != nil; t = q.Pop() {
		out = append(out, t)
	}
	return out
}

// QuiescentDriver wraps a driver into a core.QuiescentDriver: quiescent
// until Register counts an I/O source, and the first Register after none
// runs the activation hook.
type QuiescentDriver struct {
	core.Driver
	active atomic.Int64
	hook   atomic.Pointer[func()]
}

// Quiescent implements core.QuiescentDriver.
func (d *QuiescentDriver) Quiescent() bool { return d.active.Load() == 0 }

// OnActive implements core.QuiescentDriver.
func (d *QuiescentDriver) OnActive(fn func()) { d.hook.Store(&fn) }

// Register counts one I/O source, running the activation hook if it is
// the first.
func (d *QuiescentDriver) Register() {
	if d.active.Add(1) == 1 {
		if fn := d.hook.Load(); fn != nil {
			(*fn)()
		}
	}
}

var _ core.QuiescentDriver = (*QuiescentDriver)(nil)
