package percore_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/percore"
)

// stressFuture needs `wakes` wake-ups before it is ready, and counts how
// often it returned ready (never more than once) and how often it was
// dropped.
type stressFuture struct {
	wakes   int32
	seen    atomic.Int32
	waker   core.AtomicWaker
	readies atomic.Int32
	drops   atomic.Int32
	// peers are woken from inside this task's polls (cx.Wake), the local
	// half of the routing rule.
	peers []*stressFuture
}

func (f *stressFuture) Poll(cx *core.Context) (int, bool) {
	for _, p := range f.peers {
		if w := p.waker.Take(); w != nil {
			p.seen.Add(1)
			cx.Wake(w)
		}
	}
	if f.seen.Load() >= f.wakes {
		f.readies.Add(1)
		return int(f.wakes), true
	}
	f.waker.Register(cx.Waker())
	if f.seen.Load() >= f.wakes {
		f.waker.Take()
		f.readies.Add(1)
		return int(f.wakes), true
	}
	return 0, false
}

func (f *stressFuture) Drop() { f.drops.Add(1); f.waker.Take() }

func (f *stressFuture) wake() {
	f.seen.Add(1)
	f.waker.Wake()
}

// TestStressFourWorkers spawns tasks from outside and inside the pool on
// four workers, wakes them from foreign goroutines and from each other's
// polls, and aborts some; every task ends exactly once, every handle
// resolves, and nothing is left behind after Close.
func TestStressFourWorkers(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	tasks, wakes := 2000, int32(6)
	if raceEnabled {
		tasks, wakes = 400, 4
	}
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler(percore.Name).Workers(4).Build()
	require.NoError(t, err)

	fs := make([]*stressFuture, tasks)
	for i := range fs {
		fs[i] = &stressFuture{wakes: wakes}
	}
	for i, f := range fs {
		f.peers = []*stressFuture{fs[(i+1)%tasks], fs[(i+7)%tasks]}
	}
	hs := make([]*core.JoinHandle[int], tasks)
	// Half spawned from outside, half from inside a task.
	for i := 0; i < tasks/2; i++ {
		hs[i] = rt.Spawn(r.Handle(), core.Future[int](fs[i]))
	}
	_, err = rt.BlockOn(r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		for i := tasks / 2; i < tasks; i++ {
			hs[i] = core.Spawn(cx, core.Future[int](fs[i]))
		}
		return core.Unit{}, true
	}))
	require.NoError(t, err)

	aborted := make([]bool, tasks)
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range aborted {
		aborted[i] = rng.IntN(10) == 0
	}
	var wg sync.WaitGroup
	const wakers = 4
	for g := 0; g < wakers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for round := int32(0); round < wakes; round++ {
				for i := g; i < tasks; i += wakers {
					if aborted[i] && round == 1 {
						hs[i].Abort()
					}
					fs[i].wake()
				}
			}
		}(g)
	}
	wg.Wait()

	deadline := time.Now().Add(60 * time.Second)
	for i, h := range hs {
		for !h.IsFinished() {
			// A task may still need a wake whose waker was registered
			// after the wakers above finished: keep waking until it ends.
			fs[i].waker.Wake()
			require.True(t, time.Now().Before(deadline), "task %d never finished", i)
			time.Sleep(time.Millisecond)
		}
	}
	for i, h := range hs {
		res, ok := h.Poll(core.NewContext(nil))
		require.True(t, ok)
		f := fs[i]
		if res.Err != nil {
			assert.True(t, aborted[i], "task %d failed without an abort: %v", i, res.Err)
			assert.EqualValues(t, 0, f.readies.Load())
			assert.EqualValues(t, 1, f.drops.Load(), "an aborted task is dropped once")
		} else {
			assert.EqualValues(t, wakes, res.Value)
			assert.EqualValues(t, 1, f.readies.Load(), "task %d ready once", i)
			assert.EqualValues(t, 0, f.drops.Load())
		}
	}
	var polls uint64
	for _, m := range r.Metrics() {
		polls += m.Polls
	}
	assert.NotZero(t, polls)
	require.NoError(t, r.Close())
	goleak.VerifyNone(t, ignore)
}
