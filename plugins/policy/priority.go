package policy

import (
	"container/heap"

	"github.com/weftrt/weft/core"
)

// Priority is the reference policy: a runnable task of higher priority runs
// before one of lower priority, and tasks of equal priority run in the
// order they became runnable (FIFO). Its zero value is not ready; use
// NewPriority.
type Priority struct {
	prio  map[core.TaskID]int // live tasks' priorities
	queue prioQueue           // runnable tasks, and stale items
	// cur maps a runnable task to the seq of its live queue item; an item
	// whose seq differs is stale (the task was polled, maybe woken again).
	cur map[core.TaskID]uint64
	seq uint64
	out []core.TaskID
}

// NewPriority returns an empty priority policy.
func NewPriority() *Priority {
	return &Priority{prio: map[core.TaskID]int{}, cur: map[core.TaskID]uint64{}}
}

type prioItem struct {
	id   core.TaskID
	prio int
	seq  uint64 // when it became runnable: FIFO within a priority
}

type prioQueue []prioItem

func (q prioQueue) Len() int { return len(q) }
func (q prioQueue) Less(i, j int) bool {
	if q[i].prio != q[j].prio {
		return q[i].prio > q[j].prio
	}
	return q[i].seq < q[j].seq
}
func (q prioQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *prioQueue) Push(x any)   { *q = append(*q, x.(prioItem)) }
func (q *prioQueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

// OnEvents implements Policy. Tasks that stopped being runnable (polled or
// completed) are removed lazily, when they reach the front of the queue.
func (p *Priority) OnEvents(b Batch) []core.TaskID {
	for _, e := range b.Events {
		switch e.Kind {
		case Spawned, Woken:
			p.prio[e.Task] = e.Priority
			if p.cur[e.Task] == 0 {
				p.seq++
				p.cur[e.Task] = p.seq
				heap.Push(&p.queue, prioItem{id: e.Task, prio: e.Priority, seq: p.seq})
			}
		case Polled:
			delete(p.cur, e.Task)
		case Completed:
			delete(p.cur, e.Task)
			delete(p.prio, e.Task)
		}
	}
	if p.queue.Len() > 2*len(p.cur)+64 {
		// Mostly stale items: rebuild, so the heap stays proportional
		// to the runnable tasks.
		live := p.queue[:0]
		for _, it := range p.queue {
			if p.cur[it.id] == it.seq {
				live = append(live, it)
			}
		}
		p.queue = live
		heap.Init(&p.queue)
	}
	// The first Max runnable tasks in order: pop them, then push them
	// back (the host has not polled them yet; its Polled events remove
	// them).
	p.out = p.out[:0]
	var keep []prioItem
	for len(p.out) < b.Max && p.queue.Len() > 0 {
		it := heap.Pop(&p.queue).(prioItem)
		if p.cur[it.id] != it.seq {
			continue // stale: polled or completed since it was queued
		}
		p.out = append(p.out, it.id)
		keep = append(keep, it)
	}
	for _, it := range keep {
		heap.Push(&p.queue, it)
	}
	return p.out
}
