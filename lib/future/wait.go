package future

import "github.com/weftrt/weft/core"

// Wait blocks the calling goroutine until f is ready and returns its output.
// It is the bridge from ordinary Go code into futures, for tests, command
// line tools and adapters, and works outside any runtime.
//
// Wait polls f on the calling goroutine with a Context that has no worker and
// an unconstrained budget, and a waker that unparks the goroutine. Between
// polls the goroutine is parked on a channel, never spinning; a wake that
// arrives while f is being polled is remembered, so it is never lost, and
// several wakes between two polls cause a single poll.
//
// Futures that need a runtime worker do not work here: I/O and timer futures
// reach their driver and clock through the Context's worker, which Wait does
// not have, so they fail (typically with an error wrapping
// [core.ErrNoRuntime]) or never become ready. Spawn such futures on a
// runtime and wait for the [core.JoinHandle] (which is a plain future and may
// be passed to Wait) instead. Never call Wait from inside a task: it would
// block the worker polling that task.
//
// If f's Poll panics, Wait drops f before the panic leaves it, so f's
// resources are released as if it had been abandoned.
func Wait[T any](f core.Future[T]) T {
	if f == nil {
		panic("future.Wait: nil future")
	}
	p := &parker{ch: make(chan struct{}, 1)}
	cx := core.NewContext(p)
	done := false
	defer func() {
		if !done {
			// Only a panic in Poll gets here; f has not returned ready.
			core.Drop(f)
		}
	}()
	for {
		if v, ok := f.Poll(cx); ok {
			done = true
			return v
		}
		<-p.ch
	}
}

// parker is the waker of a goroutine blocked in Wait. Its channel holds at
// most one token: a wake deposits it unless one is already there, and the
// waiting goroutine takes it before polling again. A wake during a poll thus
// leaves a token that makes the next receive return at once.
type parker struct{ ch chan struct{} }

// Wake implements [core.Waker]. It never blocks and may be called from any
// goroutine, also after Wait returned.
func (p *parker) Wake() {
	select {
	case p.ch <- struct{}{}:
	default:
	}
}
