package future

import "github.com/weftrt/weft/core"

// Ready returns a future that is ready with v on its first poll. It holds no
// resource: its Drop does nothing. Polling it again after it returned ready
// panics.
func Ready[T any](v T) core.Future[T] { return &ready[T]{v: v} }

type ready[T any] struct {
	v    T
	done bool
}

func (r *ready[T]) Poll(*core.Context) (T, bool) {
	if r.done {
		panic(errPolledAfterDone("Ready"))
	}
	r.done = true
	v := r.v
	var zero T
	r.v = zero // the caller owns the value now; let it be collected with them
	return v, true
}

// Drop implements [core.Dropper]. It releases the value; nothing else is held.
func (r *ready[T]) Drop() {
	var zero T
	r.v = zero
	r.done = true
}

// Pending returns a future that is never ready. It never registers its waker,
// so it never causes a wake, and its Drop does nothing. It is a placeholder
// branch for [Select] and a stand-in for "forever" in tests. It holds no
// state and may be polled any number of times, even after Drop.
func Pending[T any]() core.Future[T] { return pending[T]{} }

type pending[T any] struct{}

func (pending[T]) Poll(*core.Context) (T, bool) {
	var zero T
	return zero, false
}

// Drop implements [core.Dropper]; there is nothing to release.
func (pending[T]) Drop() {}

// FromFunc returns a future whose Poll calls f (Rust's poll_fn). f follows
// the [core.Future] Poll contract: it returns (v, true) when done, or
// (zero, false) after arranging for cx.Waker() to be woken.
//
// The returned future has no Drop: a closure cannot be told it was
// abandoned. When the state f closes over holds a resource, write a type
// that implements [core.Dropper] instead. FromFunc keeps no state of its own,
// so it does not guard against being polled after it returned ready; that is
// up to f.
func FromFunc[T any](f func(cx *core.Context) (T, bool)) core.Future[T] {
	if f == nil {
		panic("future.FromFunc: nil function")
	}
	return core.PollFunc[T](f)
}

// Lazy returns a future that calls f on its first poll, on the goroutine
// polling it, and is ready with f's result. f runs at most once; if the
// future is dropped before it was polled, f never runs. Its Drop releases f
// and nothing else.
func Lazy[T any](f func() T) core.Future[T] {
	if f == nil {
		panic("future.Lazy: nil function")
	}
	return &lazy[T]{f: f}
}

type lazy[T any] struct{ f func() T }

func (l *lazy[T]) Poll(*core.Context) (T, bool) {
	f := l.f
	if f == nil {
		panic(errPolledAfterDone("Lazy"))
	}
	l.f = nil
	return f(), true
}

// Drop implements [core.Dropper]: f will not run.
func (l *lazy[T]) Drop() { l.f = nil }
