package tasks

import (
	"sync"

	"github.com/weftrt/weft/core"
)

// JoinSet owns a set of spawned tasks with outputs of type T and joins
// them in the order they finish. [JoinSet.JoinNext] resolves to the next
// finished task's output (or its *core.JoinError) and removes it from the
// set; it resolves with Empty set once the set holds no task.
//
// Aborting the set ([JoinSet.AbortAll]) aborts every task in it; they
// stay in the set until joined, and join as cancelled unless they
// finished first. Dropping the set ([JoinSet.Drop]) aborts every task and
// forgets them.
//
// How it works: each task's join waker is an entry of the set. When the
// task finishes, the runtime wakes the entry, which moves from the idle
// list to the notified list and wakes the task awaiting JoinNext. JoinNext
// takes entries from the notified list only, so it never polls a task
// that has not finished, and a JoinNext dropped after it was woken leaves
// the finished entry in the list for the next one: nothing is lost.
//
// The zero value is an empty set. Its methods are safe for concurrent use,
// but at most one JoinNext future should wait at a time (a second one
// takes over the wake-up registration of the first).
type JoinSet[T any] struct {
	mu       sync.Mutex
	idle     entryList[T] // running tasks; guarded by mu
	notified entryList[T] // finished, not yet joined; guarded by mu
	n        int          // entries in both lists; guarded by mu
	waiting  *JoinNextFuture[T]
	waker    core.Waker // of waiting; guarded by mu
	dropped  bool
}

// JoinResult is what [JoinSet.JoinNext] resolves to: the output of one
// finished task, or Empty when the set held no task.
type JoinResult[T any] struct {
	// ID is the finished task's ID.
	ID core.TaskID
	// Value is the task's output when Err is nil.
	Value T
	// Err is a *core.JoinError when the task panicked or was cancelled.
	Err error
	// Empty reports that the set held no task; the other fields are
	// zero.
	Empty bool
}

// Where an entry is.
const (
	inIdle uint8 = iota
	inNotified
	inNone
)

// entry is one task of a JoinSet, and its join waker.
type entry[T any] struct {
	set        *JoinSet[T]
	h          *core.JoinHandle[T]
	prev, next *entry[T] // guarded by set.mu
	where      uint8     // guarded by set.mu
}

type entryList[T any] struct{ head, tail *entry[T] }

func (l *entryList[T]) push(e *entry[T]) {
	e.prev, e.next = l.tail, nil
	if l.tail == nil {
		l.head = e
	} else {
		l.tail.next = e
	}
	l.tail = e
}

func (l *entryList[T]) remove(e *entry[T]) {
	if e.prev == nil {
		l.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next == nil {
		l.tail = e.prev
	} else {
		e.next.prev = e.prev
	}
	e.prev, e.next = nil, nil
}

// Wake is called by the runtime, once, when the entry's task has finished
// (the JoinHandle's waker fires only on completion). It may run on any
// goroutine.
func (e *entry[T]) Wake() {
	s := e.set
	s.mu.Lock()
	if e.where != inIdle {
		s.mu.Unlock()
		return
	}
	s.idle.remove(e)
	s.notified.push(e)
	e.where = inNotified
	w := s.waker
	s.waker, s.waiting = nil, nil
	s.mu.Unlock()
	if w != nil {
		w.Wake()
	}
}

// NewJoinSet returns an empty set.
func NewJoinSet[T any]() *JoinSet[T] { return new(JoinSet[T]) }

// Spawn spawns f on s as a task of the set and returns its handle (to
// abort it alone, or to read its ID; its output is delivered by
// JoinNext, not the handle). Spawning into a dropped set aborts the task
// at once.
func (js *JoinSet[T]) Spawn(s core.Spawner, f core.Future[T]) *core.JoinHandle[T] {
	h := core.Spawn(s, f)
	e := &entry[T]{set: js, h: h}
	js.mu.Lock()
	if js.dropped {
		js.mu.Unlock()
		h.Abort()
		return h
	}
	js.idle.push(e)
	js.n++
	js.mu.Unlock()
	// Install the entry as the task's join waker. It is in the idle list
	// first, so its Wake finds it there. If the task has already
	// finished, the poll says so and the entry is moved now.
	if _, done := h.Poll(core.NewContext(e)); done {
		e.Wake()
	}
	return h
}

// Len returns the number of tasks in the set: running, and finished but
// not yet joined.
func (js *JoinSet[T]) Len() int {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.n
}

// IsEmpty reports whether the set holds no task.
func (js *JoinSet[T]) IsEmpty() bool { return js.Len() == 0 }

// AbortAll aborts every task in the set. They stay in the set and join
// (through JoinNext) as cancelled, unless they finished first.
func (js *JoinSet[T]) AbortAll() {
	for _, h := range js.handles(false) {
		h.Abort()
	}
}

// Drop aborts every task in the set and empties it; tasks spawned into it
// afterwards are aborted at once. Their outputs are discarded. A pending
// JoinNext future is not woken; drop it too. Drop implements
// core.Dropper and may be called more than once.
func (js *JoinSet[T]) Drop() {
	for _, h := range js.handles(true) {
		h.Abort()
		h.Drop()
	}
}

// Close is another name for Drop.
func (js *JoinSet[T]) Close() { js.Drop() }

// handles returns the handles of the set's tasks, emptying the set (and
// marking it dropped) when detach is set.
func (js *JoinSet[T]) handles(detach bool) []*core.JoinHandle[T] {
	js.mu.Lock()
	defer js.mu.Unlock()
	hs := make([]*core.JoinHandle[T], 0, js.n)
	for _, l := range []*entryList[T]{&js.idle, &js.notified} {
		for e := l.head; e != nil; {
			next := e.next
			hs = append(hs, e.h)
			if detach {
				e.prev, e.next, e.where = nil, nil, inNone
			}
			e = next
		}
	}
	if detach {
		js.idle, js.notified = entryList[T]{}, entryList[T]{}
		js.n = 0
		js.dropped = true
		js.waker, js.waiting = nil, nil
	}
	return hs
}

// TryJoinNext returns the output of a finished task, removing it from the
// set, without waiting; false when no task has finished.
func (js *JoinSet[T]) TryJoinNext() (JoinResult[T], bool) {
	js.mu.Lock()
	e := js.popLocked()
	js.mu.Unlock()
	if e == nil {
		return JoinResult[T]{}, false
	}
	return e.result(), true
}

// popLocked takes the oldest finished entry, or nil.
func (js *JoinSet[T]) popLocked() *entry[T] {
	e := js.notified.head
	if e == nil {
		return nil
	}
	js.notified.remove(e)
	e.where = inNone
	js.n--
	return e
}

// joinProbe polls finished handles: it has no worker and no budget, and
// its waker is never registered (a finished handle returns at once).
var joinProbe = core.NewContext(nil)

// result reads a finished task's output and releases it.
func (e *entry[T]) result() JoinResult[T] {
	res, ok := e.h.Poll(joinProbe)
	if !ok {
		panic("weft/tasks: JoinSet entry woken before its task finished")
	}
	e.h.Drop()
	return JoinResult[T]{ID: e.h.ID(), Value: res.Value, Err: res.Err}
}

// JoinNext returns a future that resolves to the output of the next task
// of the set to finish, removing it from the set, or to a result with
// Empty set if the set holds no task when polled. It is cancel-safe:
// dropping it loses no task's output. It implements core.Dropper.
func (js *JoinSet[T]) JoinNext() *JoinNextFuture[T] { return &JoinNextFuture[T]{js: js} }

// JoinNextFuture is the future of [JoinSet.JoinNext].
type JoinNextFuture[T any] struct {
	js *JoinSet[T]
}

// Poll implements core.Future. It consumes one unit of the task's budget.
func (f *JoinNextFuture[T]) Poll(cx *core.Context) (JoinResult[T], bool) {
	if !cx.Proceed() {
		return JoinResult[T]{}, false
	}
	js := f.js
	js.mu.Lock()
	if e := js.popLocked(); e != nil {
		if js.waiting == f {
			js.waker, js.waiting = nil, nil
		}
		js.mu.Unlock()
		return e.result(), true
	}
	if js.n == 0 {
		if js.waiting == f {
			js.waker, js.waiting = nil, nil
		}
		js.mu.Unlock()
		return JoinResult[T]{Empty: true}, true
	}
	js.waker, js.waiting = cx.Waker(), f
	js.mu.Unlock()
	return JoinResult[T]{}, false
}

// Drop implements core.Dropper: the future stops waiting. A task that
// finished meanwhile stays in the set for the next JoinNext.
func (f *JoinNextFuture[T]) Drop() {
	js := f.js
	js.mu.Lock()
	if js.waiting == f {
		js.waker, js.waiting = nil, nil
	}
	js.mu.Unlock()
}

// Shutdown returns a future that aborts every task of the set and
// resolves once all of them have ended and been removed from the set
// (their outputs are discarded).
func (js *JoinSet[T]) Shutdown() core.Future[core.Unit] {
	return &shutdownFuture[T]{js: js}
}

type shutdownFuture[T any] struct {
	js      *JoinSet[T]
	aborted bool
	next    *JoinNextFuture[T]
}

func (f *shutdownFuture[T]) Poll(cx *core.Context) (core.Unit, bool) {
	if !f.aborted {
		f.aborted = true
		f.js.AbortAll()
		f.next = f.js.JoinNext()
	}
	for {
		res, ok := f.next.Poll(cx)
		if !ok {
			return core.Unit{}, false
		}
		if res.Empty {
			return core.Unit{}, true
		}
	}
}

func (f *shutdownFuture[T]) Drop() {
	if f.next != nil {
		f.next.Drop()
	}
}
