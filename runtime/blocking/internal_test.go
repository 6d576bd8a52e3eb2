package blocking

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// A goroutine whose keep-alive timer fires while a submitter is handing it
// work must take the work, not exit. The test catches the goroutine parked
// (retrying if its keep-alive wins before the test looks), then holds the
// pool's lock long enough for the timer to fire before it hands the work
// over. If the timer fires later the goroutine just takes the token; the
// outcome is the same either way.
func TestAHandOffThatRacesTheKeepAliveTimerIsHonoured(t *testing.T) {
	p := New(Config{KeepAlive: time.Millisecond})
	defer p.Shutdown(-1)
	for {
		w := &idler{wake: make(chan struct{}, 1)}
		handed := make(chan bool, 1)
		go func() {
			p.mu.Lock()
			handed <- p.parkLocked(w)
			p.mu.Unlock()
		}()
		if !lockWhileParked(p, handed) {
			continue // the keep-alive expired before we looked
		}
		time.Sleep(5 * time.Millisecond) // let the keep-alive timer fire
		require.True(t, p.wakeIdleLocked())
		p.mu.Unlock()

		require.True(t, <-handed)
		require.Empty(t, w.wake, "the token is consumed before the next park")
		require.Zero(t, p.IdleThreads())
		return
	}
}

// lockWhileParked waits until one goroutine is on p's idle stack and returns
// with p.mu held, so the goroutine cannot leave the stack. It returns false,
// without the lock, if the goroutine reported on parked that it left.
func lockWhileParked(p *Pool, parked <-chan bool) bool {
	for {
		p.mu.Lock()
		if len(p.idle) == 1 {
			return true
		}
		p.mu.Unlock()
		select {
		case <-parked:
			return false
		default:
			runtime.Gosched()
		}
	}
}

// await polls h until it resolves.
func await[T any](h *core.JoinHandle[T]) core.Result[T] {
	woken := make(chan struct{}, 1)
	cx := core.NewContext(core.WakerFunc(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}))
	for {
		if r, ok := h.Poll(cx); ok {
			return r
		}
		<-woken
	}
}

// The pool's jobs finish in one poll, but the scheduler they are bound to is
// a complete one: a task that wakes itself during its poll is queued again.
func TestATaskWokenDuringItsPollIsQueuedAgain(t *testing.T) {
	p := New(Config{})
	defer p.Shutdown(-1)
	polls := 0
	task, h := core.NewTask[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
		polls++
		if polls < 3 {
			cx.Waker().Wake()
			return 0, false
		}
		return polls, true
	}))
	require.NoError(t, p.sched.Spawn(task, nil))
	require.Equal(t, 3, await(h).Value)
}

// A task woken after the pool shut down is cancelled instead of queued.
func TestATaskWokenAfterShutdownIsCancelled(t *testing.T) {
	p := New(Config{})
	wakers := make(chan core.Waker, 1)
	task, h := core.NewTask[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
		wakers <- cx.Waker()
		return 0, false
	}))
	require.NoError(t, p.sched.Spawn(task, nil))
	waker := <-wakers
	require.True(t, p.Shutdown(-1))

	waker.Wake()
	_, err := await(h).Unwrap()
	require.True(t, core.IsCancelled(err))
	require.ErrorIs(t, err, core.ErrShutdown)
}
