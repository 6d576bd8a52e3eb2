package plugins_test

import (
	"errors"
	"iter"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// A small harness: a task body written as straight-line code that awaits
// futures, run as a coroutine inside a real task (so every future is polled
// by a runtime worker with the task's waker).

type co struct {
	cx    *core.Context
	yield func(struct{}) bool
}

var errAbandoned = errors.New("task dropped while awaiting")

type coFuture struct {
	c    *co
	next func() (struct{}, bool)
	stop func()
	err  error
}

func task(body func(c *co) error) core.Future[error] {
	f := &coFuture{c: &co{}}
	f.next, f.stop = iter.Pull(func(yield func(struct{}) bool) {
		f.c.yield = yield
		defer func() {
			if r := recover(); r != nil && r != errAbandoned {
				panic(r)
			}
		}()
		f.err = body(f.c)
	})
	return f
}

func (f *coFuture) Poll(cx *core.Context) (error, bool) {
	f.c.cx = cx
	if _, more := f.next(); more {
		return nil, false
	}
	return f.err, true
}

func (f *coFuture) Drop() { f.stop() }

func await[T any](c *co, f core.Future[T]) T {
	for {
		if v, ok := f.Poll(c.cx); ok {
			return v
		}
		if !c.yield(struct{}{}) {
			core.Drop(f)
			panic(errAbandoned)
		}
	}
}

func awaitR[T any](c *co, f core.Future[core.Result[T]]) (T, error) {
	return await(c, f).Unwrap()
}

// run runs body as the root task of r and fails the test if it does not
// finish within limit (a hang becomes a failure, never a verdict).
func run(t *testing.T, r *rt.Runtime, limit time.Duration, body func(c *co) error) error {
	t.Helper()
	type res struct{ err, jerr error }
	done := make(chan res, 1)
	go func() {
		err, jerr := rt.BlockOn(r, task(body))
		done <- res{err, jerr}
	}()
	select {
	case x := <-done:
		if x.jerr != nil {
			return x.jerr
		}
		return x.err
	case <-time.After(limit):
		r.ShutdownBackground()
		<-done
		t.Fatalf("the task did not finish within %v", limit)
		return nil
	}
}
