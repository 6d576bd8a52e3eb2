package co_test

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/oneshot"
)

func TestMainReturnsTheBodysValue(t *testing.T) {
	v, err := run(t, newRuntime(t), func(c *co.Ctx) int { return 42 })
	require.NoError(t, err)
	assert.Equal(t, 42, v)
}

func TestMainReturnsTheBodysOwnErrorAsIs(t *testing.T) {
	errNotFound := errors.New("not found")
	v, err := co.Main(newRuntime(t), func(c *co.Ctx) (int, error) { return 7, errNotFound })
	assert.Same(t, errNotFound, err, "the body's error must come back unwrapped")
	assert.Equal(t, 7, v, "the body's value comes back beside its error")
}

func TestMainReportsAPanickingBodyAsAJoinError(t *testing.T) {
	_, err := co.Main(newRuntime(t), func(c *co.Ctx) (int, error) { panic("boom") })
	var je *core.JoinError
	require.ErrorAs(t, err, &je)
	assert.True(t, je.IsPanic())
	assert.Equal(t, "boom", je.PanicValue())
}

func TestMainOnAClosedRuntimeReportsTheShutdown(t *testing.T) {
	r := newRuntime(t)
	require.NoError(t, r.Close())
	ran := false
	_, err := co.Main(r, func(c *co.Ctx) (int, error) { ran = true; return 1, nil })
	require.ErrorIs(t, err, core.ErrShutdown)
	assert.False(t, ran)
}

func TestRunReturnsTheBodysError(t *testing.T) {
	r := newRuntime(t)
	errStop := errors.New("stop")
	require.Same(t, errStop, co.Run(r, func(c *co.Ctx) error { return errStop }))
	require.NoError(t, co.Run(r, func(c *co.Ctx) error { c.Yield(); return nil }))
}

func TestAwaitSuspendsTheBodyUntilTheFutureIsReady(t *testing.T) {
	r := newRuntime(t)
	v, err := run(t, r, func(c *co.Ctx) string {
		tx, rx := oneshot.New[string]()
		h := co.Go(c, func(c *co.Ctx) int {
			c.Yield()
			c.Yield()
			_ = tx.Send("hello")
			return 7
		})
		got, err := co.AwaitResult(c, rx.Recv())
		if err != nil {
			return err.Error()
		}
		n, err := co.AwaitResult(c, h)
		if err != nil || n != 7 {
			return "join failed"
		}
		return got
	})
	require.NoError(t, err)
	assert.Equal(t, "hello", v)
}

func TestManyCoroutineTasksJoinInAnyOrder(t *testing.T) {
	r := newRuntime(t)
	sum, err := run(t, r, func(c *co.Ctx) int {
		var hs []*core.JoinHandle[int]
		for i := range 100 {
			hs = append(hs, co.Go(c, func(c *co.Ctx) int {
				for range i % 5 {
					c.Yield()
				}
				return i
			}))
		}
		total := 0
		for _, h := range hs {
			v, err := co.AwaitResult(c, h)
			if err != nil {
				return -1
			}
			total += v
		}
		return total
	})
	require.NoError(t, err)
	assert.Equal(t, 99*100/2, sum)
}

func TestAbortUnwindsTheBodyRunningItsDefersAndDroppingItsFuture(t *testing.T) {
	r := newRuntime(t)
	g := &gate{}
	var deferred, after atomic.Bool
	err := runE(t, r, func(c *co.Ctx) error {
		h := co.Go(c, func(c *co.Ctx) int {
			defer deferred.Store(true)
			co.Await(c, core.Future[core.Unit](g))
			after.Store(true)
			return 1
		})
		for !g.waiting() {
			c.Yield()
		}
		h.Abort()
		_, err := co.AwaitResult(c, h)
		if !core.IsCancelled(err) {
			return errors.New("the aborted task did not end cancelled")
		}
		return nil
	})
	require.NoError(t, err)
	assert.True(t, deferred.Load(), "the body's defer ran")
	assert.False(t, after.Load(), "the body did not continue after the abort")
	assert.Equal(t, 1, g.Drops(), "the awaited future was dropped once")
}

func TestAnAwaitInADeferWhileUnwindingDoesNotWait(t *testing.T) {
	r := newRuntime(t)
	g1, g2 := &gate{}, &gate{}
	var reached atomic.Int32
	err := runE(t, r, func(c *co.Ctx) error {
		h := co.Go(c, func(c *co.Ctx) int {
			defer reached.Add(1) // runs last, after the awaiting defer panicked
			defer func() {
				co.Await(c, core.Future[core.Unit](g2)) // does not wait
				reached.Add(100)                        // never reached
			}()
			co.Await(c, core.Future[core.Unit](g1))
			return 1
		})
		for !g1.waiting() {
			c.Yield()
		}
		h.Abort()
		_, err := co.AwaitResult(c, h)
		if !core.IsCancelled(err) {
			return errors.New("not cancelled")
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int32(1), reached.Load())
	assert.Equal(t, 1, g1.Drops())
	assert.Equal(t, 1, g2.Drops())
}

func TestShutdownUnwindsSuspendedBodies(t *testing.T) {
	r := newRuntime(t)
	g := &gate{}
	var unwound atomic.Int32
	_, err := run(t, r, func(c *co.Ctx) int {
		for range 10 {
			co.Go(c, func(c *co.Ctx) int {
				defer unwound.Add(1)
				co.Await(c, core.Future[core.Unit](g))
				return 0
			})
		}
		for !g.waiting() {
			c.Yield()
		}
		return 0
	})
	require.NoError(t, err)
	r.Shutdown(0)
	assert.Equal(t, int32(10), unwound.Load())
}

func TestAPanicFailsTheTaskWithItsValueAndTheCoroutineIsReused(t *testing.T) {
	r := newRuntime(t)
	co.ReleaseIdle()
	err := runE(t, r, func(c *co.Ctx) error {
		h := co.Go(c, func(c *co.Ctx) int {
			c.Yield()
			panic("boom")
		})
		_, err := co.AwaitResult(c, h)
		var je *core.JoinError
		if !errors.As(err, &je) || !je.IsPanic() || je.PanicValue() != "boom" {
			return errors.New("want a panic JoinError carrying \"boom\"")
		}
		return nil
	})
	require.NoError(t, err)
	// Both coroutines (the root's and the panicking task's) are idle again.
	assert.Equal(t, 2, co.Idle())
}

// panickingBody is the body whose name the JoinError's stack must show.
func panickingBody(c *co.Ctx) int {
	c.Yield()
	panic("boom")
}

func TestAPanicsJoinErrorCarriesTheStackOfTheBodyNotOfTheReRaise(t *testing.T) {
	r := newRuntime(t)
	err := runE(t, r, func(c *co.Ctx) error {
		_, err := co.AwaitResult(c, co.Go(c, panickingBody))
		var je *core.JoinError
		if !errors.As(err, &je) || !je.IsPanic() {
			return fmt.Errorf("want a panic JoinError, got %v", err)
		}
		if je.PanicValue() != "boom" {
			return fmt.Errorf("want the body's own panic value, got %#v", je.PanicValue())
		}
		if !strings.Contains(string(je.Stack()), "co_test.panickingBody") {
			return fmt.Errorf("the stack does not show the body that panicked:\n%s", je.Stack())
		}
		if !strings.Contains(err.Error(), "Stack") {
			return fmt.Errorf("the error does not say where its stack is: %v", err)
		}
		return nil
	})
	require.NoError(t, err)
}

func TestAwaitOutsideACoroutineTaskPanicsWithAClearMessage(t *testing.T) {
	msg := func(f func()) (s string) {
		defer func() { s, _ = recover().(string) }()
		f()
		return ""
	}
	assert.Contains(t, msg(func() { co.Await[int](nil, future.Ready(1)) }), "nil *co.Ctx")

	r := newRuntime(t)
	escaped, err := run(t, r, func(c *co.Ctx) *co.Ctx { return c })
	require.NoError(t, err)
	m := msg(func() { co.Await(escaped, future.Ready(1)) })
	assert.True(t, strings.Contains(m, "outside its coroutine task"), m)

}

func TestSequentialTasksReuseOneCoroutine(t *testing.T) {
	r := newRuntime(t)
	co.ReleaseIdle()
	before := co.Started()
	_, err := run(t, r, func(c *co.Ctx) int {
		for i := range 1000 {
			if v, err := co.AwaitResult(c, co.Go(c, func(c *co.Ctx) int { c.Yield(); return i })); err != nil || v != i {
				return -1
			}
		}
		return 0
	})
	require.NoError(t, err)
	assert.LessOrEqual(t, co.Idle(), 2)
	// The root and one child at a time: two coroutines, whatever else the
	// process's goroutines are doing (counting goroutines made this test
	// depend on other tests' goroutines still exiting).
	assert.LessOrEqual(t, co.Started()-before, int64(2))
}

func TestSetMaxIdleBoundsThePool(t *testing.T) {
	r := newRuntime(t)
	prev := co.SetMaxIdle(3)
	defer co.SetMaxIdle(prev)
	_, err := run(t, r, func(c *co.Ctx) int {
		g := &gate{}
		var hs []*core.JoinHandle[int]
		for range 10 {
			hs = append(hs, co.Go(c, func(c *co.Ctx) int { co.Await(c, core.Future[core.Unit](g)); return 0 }))
		}
		// All ten are suspended at once, each on its own coroutine.
		for g.waiters() < 10 {
			c.Yield()
		}
		g.Open()
		for _, h := range hs {
			co.Await(c, h)
		}
		return 0
	})
	require.NoError(t, err)
	assert.LessOrEqual(t, co.Idle(), 3)
	assert.LessOrEqual(t, co.ReleaseIdle(), 3)
	assert.Equal(t, 0, co.Idle())
}

func TestACoroutineFutureLosingASelectIsUnwound(t *testing.T) {
	r := newRuntime(t)
	var unwound atomic.Bool
	v, err := run(t, r, func(c *co.Ctx) int {
		slow := co.Future(func(c *co.Ctx) int {
			defer unwound.Store(true)
			co.Await(c, future.Pending[core.Unit]())
			return 1
		})
		fast := co.Future(func(c *co.Ctx) int { c.Yield(); return 2 })
		s := co.Await(c, future.Select[int](slow, fast))
		return s.Value
	})
	require.NoError(t, err)
	assert.Equal(t, 2, v)
	assert.True(t, unwound.Load())
}

func TestSpawningFromARuntimeHandleWorks(t *testing.T) {
	r := newRuntime(t)
	h := co.Go(r, func(c *co.Ctx) int { c.Yield(); return 5 })
	v, err := run(t, r, func(c *co.Ctx) int {
		v, err := co.AwaitResult(c, h)
		if err != nil {
			return -1
		}
		return v
	})
	require.NoError(t, err)
	assert.Equal(t, 5, v)
}
