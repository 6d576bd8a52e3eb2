package percore

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// mailbox is how the rest of the world hands a worker the tasks it owns: a
// wake from outside the pool (a driver, a timer, another goroutine) of a
// task that worker last polled. A FIFO under a mutex with an atomic length
// mirror, so the worker's per-tick "anything for me?" costs one load.
//
// After pushing, the sender unparks the worker (parker.unpark), whose
// state machine makes the wake impossible to lose whether the worker is
// running, deciding to park, or asleep in its driver.
//
// A mailbox closes when its worker fails or reaches the end of its
// shutdown; a closed mailbox refuses tasks, and the sender routes them to
// the global queue instead (or shuts them down once that is closed too).
type mailbox struct {
	mu     sync.Mutex
	list   core.TaskQueue
	closed bool
	// n mirrors list.Len(), stored under mu.
	n atomic.Int64
}

// push queues t and reports true, or false once the mailbox is closed.
func (m *mailbox) push(t *core.Task) bool {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return false
	}
	m.list.Push(t)
	m.n.Store(int64(m.list.Len()))
	m.mu.Unlock()
	return true
}

// isEmpty reports whether the mirror reads zero (no lock).
func (m *mailbox) isEmpty() bool { return m.n.Load() == 0 }

// takeAll moves every queued task into into, oldest first.
func (m *mailbox) takeAll(into *core.TaskQueue) {
	if m.isEmpty() {
		return
	}
	m.mu.Lock()
	into.PushAll(&m.list)
	m.n.Store(0)
	m.mu.Unlock()
}

// close refuses later pushes and moves what is queued into into.
func (m *mailbox) close(into *core.TaskQueue) {
	m.mu.Lock()
	m.closed = true
	into.PushAll(&m.list)
	m.n.Store(0)
	m.mu.Unlock()
}
