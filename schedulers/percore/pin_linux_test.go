//go:build linux

package percore

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/rt"
)

func gettid() int { return unix.Gettid() }

func TestLockedWorkersStayOnTheirThread(t *testing.T) {
	r, _ := runtimeWith(t, 2, nil, func(c *Config) { c.LockThreads = true })
	threads := map[int]map[int]bool{}
	var mu sync.Mutex
	const yields = 100
	var hs []*core.JoinHandle[core.Unit]
	for k := 0; k < 4; k++ {
		i := 0
		hs = append(hs, rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
			w := cx.Worker().(*worker).index
			mu.Lock()
			if threads[w] == nil {
				threads[w] = map[int]bool{}
			}
			threads[w][gettid()] = true
			mu.Unlock()
			if i++; i < yields {
				cx.Defer(cx.Waker())
				return core.Unit{}, false
			}
			return core.Unit{}, true
		}))))
	}
	for _, h := range hs {
		res, err := blockOn(t, r, core.Future[core.Result[core.Unit]](h))
		require.NoError(t, err)
		require.NoError(t, res.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, threads)
	for w, tids := range threads {
		assert.Len(t, tids, 1, "worker %d ran on threads %v", w, tids)
	}
}

// TestPinnedWorkersRunOnTheirCPU checks that a pinned worker's thread may
// run only on its CPU, the i-th allowed one (cycling).
func TestPinnedWorkersRunOnTheirCPU(t *testing.T) {
	cpus, err := allowedCPUs()
	require.NoError(t, err)
	r, s := runtimeWith(t, 2, nil, func(c *Config) { c.Pin = true })
	for i, w := range s.workers {
		assert.Equal(t, cpus[i%len(cpus)], w.cpu)
	}
	var mu sync.Mutex
	seen := map[int]string{}
	var hs []*core.JoinHandle[core.Unit]
	for k := 0; k < 8; k++ {
		hs = append(hs, rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
			w := cx.Worker().(*worker)
			var set unix.CPUSet
			got := "error"
			if unix.SchedGetaffinity(0, &set) == nil {
				got = fmt.Sprintf("%d CPU(s), own CPU set: %v", set.Count(), set.IsSet(w.cpu))
			}
			mu.Lock()
			seen[w.index] = got
			mu.Unlock()
			return core.Unit{}, true
		}))))
	}
	for _, h := range hs {
		res, err := blockOn(t, r, core.Future[core.Result[core.Unit]](h))
		require.NoError(t, err)
		require.NoError(t, res.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, seen)
	for w, got := range seen {
		assert.Equal(t, "1 CPU(s), own CPU set: true", got, "worker %d", w)
	}
}

// TestPinningToACPUOutsideTheAllowedSetFailsNew checks that a pinning
// error is a startup error of New.
func TestPinningToACPUOutsideTheAllowedSetFailsNew(t *testing.T) {
	cpus, err := allowedCPUs()
	require.NoError(t, err)
	bad := -1
	for c := maxCPU - 1; c >= 0; c-- {
		if !contains(cpus, c) {
			bad = c
			break
		}
	}
	if bad < 0 {
		t.Skip("every CPU is allowed")
	}
	cfg := DefaultConfig()
	cfg.Workers = 1
	cfg.Pin = true
	cfg.CPUs = []int{bad}
	_, err = New(cfg, core.SchedulerParams{Tasks: core.NewTaskSet(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("pinning a worker to CPU %d", bad))
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
