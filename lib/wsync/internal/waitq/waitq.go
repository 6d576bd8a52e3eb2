// Package waitq holds the two building blocks every weft sync primitive
// shares: an intrusive doubly-linked list of waiters, and a small batch of
// wakers to wake once a lock is released.
//
// # The list
//
// A [List] is circular around a sentinel node that lives in the List value
// itself. A waiter embeds a [Node] and is linked through it, so queueing a
// waiter allocates nothing and unlinking one is O(1) from the node alone:
// it needs neither the list head nor a search. That is what lets a dropped
// future remove itself from the middle of a queue, and lets a primitive
// move all its waiters to a private list in O(1) (TakeAll) and wake them in
// batches while other waiters come and go.
//
// Neither type is synchronised: each primitive guards its lists and nodes
// with its own mutex. A List must not be copied once used (nodes point at
// its sentinel); its zero value is an empty list.
package waitq

import "github.com/weftrt/weft/core"

// Node links a waiter of type W into a [List]. Embed it in the waiter; a
// Node must not be copied while linked.
type Node[W any] struct {
	prev, next *Node[W]
	// owner is the waiter the node belongs to, set when it is linked.
	owner *W
}

// Linked reports whether the node is in a list.
func (n *Node[W]) Linked() bool { return n.next != nil }

// Unlink removes the node from whatever list holds it, in O(1). It
// reports false, and does nothing, if the node is not linked.
func (n *Node[W]) Unlink() bool {
	if n.next == nil {
		return false
	}
	n.prev.next = n.next
	n.next.prev = n.prev
	n.prev, n.next = nil, nil
	return true
}

// List is a FIFO of waiters linked through their [Node]s.
type List[W any] struct {
	// root is the sentinel: root.next is the head, root.prev the tail. A
	// zero root means an empty list that was never used.
	root Node[W]
}

func (l *List[W]) lazyInit() {
	if l.root.next == nil {
		l.root.next = &l.root
		l.root.prev = &l.root
	}
}

// Empty reports whether the list holds no waiter.
func (l *List[W]) Empty() bool { return l.root.next == nil || l.root.next == &l.root }

// PushBack links n, the node embedded in owner, at the tail. n must not be
// linked.
func (l *List[W]) PushBack(n *Node[W], owner *W) {
	if n.next != nil {
		panic("waitq: PushBack of a linked node")
	}
	l.lazyInit()
	n.owner = owner
	n.prev = l.root.prev
	n.next = &l.root
	l.root.prev.next = n
	l.root.prev = n
}

// Front returns the waiter at the head, or nil.
func (l *List[W]) Front() *W {
	if l.Empty() {
		return nil
	}
	return l.root.next.owner
}

// PopFront unlinks and returns the waiter at the head, or nil.
func (l *List[W]) PopFront() *W {
	if l.Empty() {
		return nil
	}
	n := l.root.next
	n.Unlink()
	return n.owner
}

// TakeAll moves every waiter of l, in order, to the tail of dst, in O(1).
// l is empty afterwards. The waiters stay individually unlinkable.
func (l *List[W]) TakeAll(dst *List[W]) {
	if l.Empty() {
		return
	}
	dst.lazyInit()
	first, last := l.root.next, l.root.prev
	first.prev = dst.root.prev
	last.next = &dst.root
	dst.root.prev.next = first
	dst.root.prev = last
	l.root.next = &l.root
	l.root.prev = &l.root
}

// Len counts the waiters, in O(n). It is meant for tests and metrics.
func (l *List[W]) Len() int {
	n := 0
	if l.root.next == nil {
		return 0
	}
	for p := l.root.next; p != &l.root; p = p.next {
		n++
	}
	return n
}

// WakeList collects wakers while a primitive holds its lock, so that they
// are woken after the lock is released: a waker may run scheduler code, and
// must never run under a primitive's lock. It holds a fixed number of
// wakers; when Push reports it full, the caller releases its lock, calls
// WakeAll, and continues.
type WakeList struct {
	ws [wakeListCap]core.Waker
	n  int
}

// wakeListCap bounds the wakers woken per lock hold. Tokio's WakeList holds
// 32; 16 keeps the array cheap to clear on the common path that wakes one.
const wakeListCap = 16

// Push adds w (nil is ignored). It reports false when the list is full
// afterwards, and the caller must wake it before pushing more.
func (l *WakeList) Push(w core.Waker) bool {
	if w != nil {
		l.ws[l.n] = w
		l.n++
	}
	return l.n < wakeListCap
}

// Len returns the number of wakers held.
func (l *WakeList) Len() int { return l.n }

// WakeAll wakes every waker held and empties the list. With a non-nil cx
// (the caller is inside a poll) the wakes go through cx.Wake, so a woken
// task is scheduled on the calling worker; otherwise they are plain wakes.
func (l *WakeList) WakeAll(cx *core.Context) {
	for i := 0; i < l.n; i++ {
		w := l.ws[i]
		l.ws[i] = nil
		Wake(cx, w)
	}
	l.n = 0
}

// Wake wakes w through cx when cx is not nil (inside a poll: the woken task
// runs on the calling worker), and with w.Wake otherwise. A nil w is
// ignored.
func Wake(cx *core.Context, w core.Waker) {
	if w == nil {
		return
	}
	if cx != nil {
		cx.Wake(w)
		return
	}
	w.Wake()
}
