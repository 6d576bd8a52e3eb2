package currentthread_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// stressFuture needs `wakes` wake-ups before it is ready. It counts the
// times it returned ready, which must never exceed one.
type stressFuture struct {
	wakes    int32
	seen     atomic.Int32
	waker    core.AtomicWaker
	readies  atomic.Int32
	drops    atomic.Int32
	value    int
	aborted  atomic.Bool
	resolved atomic.Int32 // join wakes observed for this task's handle
}

func (f *stressFuture) Poll(cx *core.Context) (int, bool) {
	if f.seen.Load() >= f.wakes {
		f.readies.Add(1)
		return f.value, true
	}
	f.waker.Register(cx.Waker())
	if f.seen.Load() >= f.wakes {
		f.waker.Take()
		f.readies.Add(1)
		return f.value, true
	}
	return 0, false
}

func (f *stressFuture) Drop() { f.drops.Add(1); f.waker.Take() }

func (f *stressFuture) wake() {
	f.seen.Add(1)
	f.waker.Wake()
}

type joinCounter struct{ f *stressFuture }

func (j joinCounter) Wake() { j.f.resolved.Add(1) }

// TestStressMillionTasksFromFourGoroutines spawns stressTasks tasks from 4
// goroutines that also wake and abort random earlier tasks. Every join
// handle must resolve exactly once, with its value or, for an aborted task,
// a cancellation; no future may complete twice or be dropped after
// completing; nothing may be left running after Close.
func TestStressMillionTasksFromFourGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	n := stressTasks
	if testing.Short() {
		n = 50_000
	}
	const spawners = 4
	var terminated atomic.Int64
	var allDone core.AtomicWaker
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").
		TaskHooks(core.TaskHooks{OnTerminate: func(core.TaskID) {
			if terminated.Add(1) >= int64(n) {
				allDone.Wake()
			}
		}}).Build()
	require.NoError(t, err)

	futs := make([]*stressFuture, n)
	handles := make([]*core.JoinHandle[int], n)

	// The driving goroutine: BlockOn on a root that waits until every
	// task has terminated.
	var driver sync.WaitGroup
	driver.Add(1)
	go func() {
		defer driver.Done()
		_, err := rt.BlockOn(r, core.PollFunc[int](func(cx *core.Context) (int, bool) {
			allDone.Register(cx.Waker())
			// The root counts itself only once it returns, so n
			// terminations are the n spawned tasks.
			return 0, terminated.Load() >= int64(n)
		}))
		require.NoError(t, err)
	}()

	var wg sync.WaitGroup
	per := n / spawners
	for g := 0; g < spawners; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 42))
			lo, hi := g*per, (g+1)*per
			if g == spawners-1 {
				hi = n
			}
			for i := lo; i < hi; i++ {
				f := &stressFuture{wakes: int32(rng.IntN(3)), value: i}
				futs[i] = f
				h := rt.Spawn(r.Handle(), core.Future[int](f))
				handles[i] = h
				// Register a counting join waker so we can check the
				// handle is woken exactly once.
				if _, ready := h.Poll(core.NewContext(joinCounter{f})); ready {
					f.resolved.Add(1)
				}
				// Wake random tasks spawned earlier by this goroutine.
				for k := 0; k < 3; k++ {
					j := lo + rng.IntN(i-lo+1)
					futs[j].wake()
				}
				if rng.IntN(10) == 0 {
					j := lo + rng.IntN(i-lo+1)
					futs[j].aborted.Store(true)
					handles[j].Abort()
				}
			}
			// Make sure every task of ours eventually has enough wakes.
			for i := lo; i < hi; i++ {
				for futs[i].seen.Load() < futs[i].wakes {
					futs[i].wake()
				}
			}
		}(g)
	}
	wg.Wait()
	driver.Wait()

	for i, h := range handles {
		f := futs[i]
		require.True(t, h.IsFinished(), "task %d not finished", i)
		res, ok := h.Poll(core.NewContext(nil))
		require.True(t, ok)
		require.EqualValues(t, 1, f.resolved.Load(), "task %d: join handle resolved %d times", i, f.resolved.Load())
		require.LessOrEqual(t, f.readies.Load(), int32(1), "task %d completed twice", i)
		switch {
		case res.Err == nil:
			require.Equal(t, i, res.Value)
			require.EqualValues(t, 1, f.readies.Load())
			require.Zero(t, f.drops.Load(), "task %d dropped after completing", i)
		default:
			require.True(t, f.aborted.Load(), "task %d failed without being aborted: %v", i, res.Err)
			require.True(t, core.IsCancelled(res.Err))
			require.Zero(t, f.readies.Load())
			require.EqualValues(t, 1, f.drops.Load(), "task %d: aborted future dropped once", i)
		}
	}
	require.NoError(t, r.Close())
}
