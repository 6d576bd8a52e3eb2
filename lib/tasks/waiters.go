package tasks

import "github.com/weftrt/weft/core"

// waiter is a waiting future's node in a waiterList: an intrusive
// doubly-linked list, so a future that is dropped leaves it in O(1). All
// fields are guarded by the lock of the list's owner.
type waiter struct {
	waker      core.Waker
	prev, next *waiter
	linked     bool
}

// waiterList is a list of waiters; the zero value is empty.
type waiterList struct{ head, tail *waiter }

func (l *waiterList) push(w *waiter) {
	w.prev, w.next = l.tail, nil
	if l.tail == nil {
		l.head = w
	} else {
		l.tail.next = w
	}
	l.tail = w
	w.linked = true
}

func (l *waiterList) remove(w *waiter) {
	if !w.linked {
		return
	}
	if w.prev == nil {
		l.head = w.next
	} else {
		w.prev.next = w.next
	}
	if w.next == nil {
		l.tail = w.prev
	} else {
		w.next.prev = w.prev
	}
	w.prev, w.next, w.linked = nil, nil, false
}

// takeWakers unlinks every waiter and returns their wakers, to be woken
// after the owner's lock is released.
func (l *waiterList) takeWakers() []core.Waker {
	var ws []core.Waker
	for w := l.head; w != nil; {
		next := w.next
		if w.waker != nil {
			ws = append(ws, w.waker)
		}
		w.prev, w.next, w.linked, w.waker = nil, nil, false, nil
		w = next
	}
	l.head, l.tail = nil, nil
	return ws
}

func wakeAll(ws []core.Waker) {
	for _, w := range ws {
		w.Wake()
	}
}
