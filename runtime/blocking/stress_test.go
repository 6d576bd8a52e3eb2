package blocking_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/blocking"
)

const (
	stressSpawners = 16
	stressJobs     = 250 // per spawner
)

// A keep-alive of a millisecond makes goroutines expire and restart all
// through the run, so hand-offs race against keep-alive timers.
func TestConcurrentSpawnersEachGetEveryJobRunExactlyOnce(t *testing.T) {
	p := newPool(t, blocking.Config{MaxThreads: 4, KeepAlive: time.Millisecond})
	const n = stressSpawners * stressJobs
	var runs [n]atomic.Int32
	var fired atomic.Int32
	var fireAndForget sync.WaitGroup

	handles := make([]*core.JoinHandle[int], n)
	var spawners sync.WaitGroup
	for s := range stressSpawners {
		spawners.Go(func() {
			for j := range stressJobs {
				id := s*stressJobs + j
				handles[id] = blocking.Spawn(p, func() int {
					runs[id].Add(1)
					if id%17 == 0 {
						panic(id)
					}
					if id%5 == 0 {
						runtime.Gosched()
					}
					return id
				})
				if j%10 == 0 {
					fireAndForget.Add(1)
					if err := p.SpawnBlockingFunc(func() {
						fired.Add(1)
						fireAndForget.Done()
					}); err != nil {
						fireAndForget.Done()
					}
				}
			}
		})
	}
	spawners.Wait()

	for id, h := range handles {
		v, err := await(h).Unwrap()
		require.Equal(t, int32(1), runs[id].Load(), "job %d", id)
		if id%17 == 0 {
			require.True(t, core.IsPanic(err), "job %d", id)
			continue
		}
		require.NoError(t, err, "job %d", id)
		require.Equal(t, id, v)
	}
	fireAndForget.Wait()
	require.Equal(t, int32(stressSpawners*stressJobs/10), fired.Load())
	require.LessOrEqual(t, p.NumThreads(), 4)
}

// Spawns, aborts and a Shutdown race; whatever the interleaving, every
// handle resolves, a handle with a value ran its job exactly once, and a
// cancelled one never ran it.
func TestConcurrentSpawnsAbortsAndShutdownResolveEveryHandleConsistently(t *testing.T) {
	p := newPool(t, blocking.Config{MaxThreads: 4, KeepAlive: time.Millisecond})
	const n = stressSpawners * stressJobs
	var runs [n]atomic.Int32
	handles := make([]*core.JoinHandle[int], n)

	var spawners sync.WaitGroup
	var spawned atomic.Int32
	for s := range stressSpawners {
		spawners.Go(func() {
			for j := range stressJobs {
				id := s*stressJobs + j
				h := blocking.Spawn(p, func() int {
					runs[id].Add(1)
					runtime.Gosched()
					return id
				})
				if id%3 == 0 {
					h.Abort()
				}
				handles[id] = h
				spawned.Add(1)
			}
		})
	}
	// Shut down part-way through, while spawners are still busy.
	eventually(t, "a quarter of the jobs are spawned", func() bool { return spawned.Load() >= n/4 })
	require.True(t, p.Shutdown(-1))
	spawners.Wait()

	var values, cancelled int
	for id, h := range handles {
		require.True(t, h.IsFinished(), "job %d", id)
		v, err := await(h).Unwrap()
		if err == nil {
			values++
			require.Equal(t, id, v)
			require.Equal(t, int32(1), runs[id].Load(), "job %d", id)
			continue
		}
		cancelled++
		require.True(t, core.IsCancelled(err), "job %d: %v", id, err)
		if id%3 != 0 {
			require.ErrorIs(t, err, core.ErrShutdown, "job %d", id)
		}
		require.Zero(t, runs[id].Load(), "job %d", id)
	}
	t.Logf("%d handles resolved with a value, %d cancelled", values, cancelled)
	require.Equal(t, n, values+cancelled)
	require.Equal(t, 0, p.NumThreads())
}
