package future

import "github.com/weftrt/weft/core"

// Map returns a future that polls f and, once f is ready with v, is ready
// with fn(v). fn runs once, on the goroutine that polled f to completion.
//
// Drop: before f is ready, dropping the Map drops f (once); after, it does
// nothing.
func Map[T, U any](f core.Future[T], fn func(T) U) core.Future[U] {
	if f == nil || fn == nil {
		panic("future.Map: nil future or function")
	}
	return &mapped[T, U]{f: f, fn: fn}
}

type mapped[T, U any] struct {
	f  core.Future[T] // nil once f is ready or dropped
	fn func(T) U
}

func (m *mapped[T, U]) Poll(cx *core.Context) (U, bool) {
	if m.f == nil {
		panic(errPolledAfterDone("Map"))
	}
	v, ok := m.f.Poll(cx)
	if !ok {
		var zero U
		return zero, false
	}
	fn := m.fn
	m.f, m.fn = nil, nil
	return fn(v), true
}

// Drop implements [core.Dropper].
func (m *mapped[T, U]) Drop() {
	if f := m.f; f != nil {
		m.f, m.fn = nil, nil
		core.Drop(f)
	}
}

// Then returns a future that runs two stages in sequence: it polls f, and
// once f is ready with v it calls fn(v) to get the second stage and polls
// that until it is ready, with its output. The second stage is first polled
// in the same poll in which f completed. fn must not return nil.
//
// Drop drops whichever stage is live: f before it completed, the second
// stage after; once the second stage is ready, Drop does nothing.
func Then[T, U any](f core.Future[T], fn func(T) core.Future[U]) core.Future[U] {
	if f == nil || fn == nil {
		panic("future.Then: nil future or function")
	}
	return &then[T, U]{first: f, fn: fn}
}

type then[T, U any] struct {
	// Exactly one of first and second is non-nil while the future is live;
	// both are nil once it returned ready or was dropped.
	first  core.Future[T]
	fn     func(T) core.Future[U]
	second core.Future[U]
}

func (t *then[T, U]) Poll(cx *core.Context) (U, bool) {
	if t.second == nil {
		if t.first == nil {
			panic(errPolledAfterDone("Then"))
		}
		v, ok := t.first.Poll(cx)
		if !ok {
			var zero U
			return zero, false
		}
		fn := t.fn
		t.first, t.fn = nil, nil
		next := fn(v)
		if next == nil {
			panic("future.Then: the function returned a nil future")
		}
		t.second = next
	}
	u, ok := t.second.Poll(cx)
	if ok {
		t.second = nil
	}
	return u, ok
}

// Drop implements [core.Dropper].
func (t *then[T, U]) Drop() {
	first, second := t.first, t.second
	t.first, t.fn, t.second = nil, nil, nil
	if first != nil {
		core.Drop(first)
	}
	if second != nil {
		core.Drop(second)
	}
}
