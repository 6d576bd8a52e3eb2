package workstealing_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

func TestShutdownFromInsideATaskDoesNotWaitForItsOwnWorker(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	r, s := newRuntime(t, 2)
	returned := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		_, err := rt.BlockOn(r, core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
			s.Shutdown() // would deadlock if it waited for this goroutine
			close(returned)
			return core.Unit{}, false
		})))
		errc <- err
	}()
	select {
	case err := <-errc:
		// The root either is still being cancelled (BlockOn reports the
		// shutdown) or was already (BlockOn reports its cancellation).
		assert.True(t, errors.Is(err, core.ErrShutdown) || core.IsCancelled(err), "got %v", err)
	case <-time.After(hangLimit):
		t.Fatal("Shutdown called from inside a task never returned")
	}
	<-returned
	// From outside, Shutdown waits for every worker goroutine, the one
	// that called it from inside included.
	s.Shutdown()
	goleak.VerifyNone(t, ignore)
}

func TestNoTaskIsPolledAfterShutdownReturns(t *testing.T) {
	r, s := newRuntime(t, 4)
	const n = 64
	var after atomic.Bool
	var late, polled atomic.Int64
	hs := make([]*core.JoinHandle[core.Unit], n)
	for i := range hs {
		first := true
		hs[i] = rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
			if after.Load() {
				late.Add(1)
			}
			if first {
				first = false
				polled.Add(1)
			}
			cx.Waker().Wake() // forever runnable
			return core.Unit{}, false
		})))
	}
	waitUntil(t, "every task is polled", func() bool { return polled.Load() == n })
	s.Shutdown()
	after.Store(true)
	for i, h := range hs {
		require.True(t, h.IsFinished(), "task %d outlived Shutdown", i)
		res, _ := h.Poll(core.NewContext(nil))
		assert.True(t, core.IsCancelled(res.Err))
	}
	assert.Zero(t, late.Load(), "tasks polled after Shutdown returned")
	assert.Zero(t, r.Tasks())
}

// TestSpawnsRacingWithShutdownAreRunOrCancelled spawns from several
// goroutines while the scheduler shuts down. Whichever side of the close
// a spawn lands on, its task must end: run, cancelled with the others, or
// refused; none may be left in a queue.
func TestSpawnsRacingWithShutdownAreRunOrCancelled(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	r, s := newRuntime(t, 4)
	const spawners = 4
	var mu sync.Mutex
	var hs []*core.JoinHandle[int]
	var wg sync.WaitGroup
	started := make(chan struct{})
	for g := 0; g < spawners; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				h := rt.Spawn(r.Handle(), core.Future[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
					// Half of them spawn a child of their own.
					if i%2 == 0 {
						core.Spawn(cx, core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { return 0, true })))
					}
					return i, true
				})))
				mu.Lock()
				hs = append(hs, h)
				mu.Unlock()
				if i == 100 {
					select {
					case <-started:
					default:
						close(started)
					}
				}
				if r.IsShutdown() && h.IsFinished() {
					return
				}
			}
		}()
	}
	<-started
	r.ShutdownBackground()
	wg.Wait()
	s.Shutdown()
	for i, h := range hs {
		require.True(t, h.IsFinished(), "spawn %d never ended", i)
	}
	assert.Zero(t, r.Tasks())
	goleak.VerifyNone(t, ignore)
}
