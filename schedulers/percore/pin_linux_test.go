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
	"github.com/weftrt/weft/runtime/rt"
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

// TestPinningToACPUOutsideTheAllowedSetIsAProblemAtItsKey checks that a
// CPU the process may not run on is found when the configuration is
// checked, at its key in cpus, and so never reaches a worker's start.
func TestPinningToACPUOutsideTheAllowedSetIsAProblemAtItsKey(t *testing.T) {
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
	_, err = rt.NewBuilder().IgnoreEnv().Scheduler(Name).
		Set("scheduler.pin", true).Set("scheduler.cpus", []int{cpus[0], bad}).Composition()
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf(`weft: config key "scheduler.cpus[1]": CPU %d is not one this process may run on (its CPUs are %s)`,
		bad, cpuList(cpus)), err.Error())

	// New validates too, so the scheduler never starts a worker with it.
	cfg := DefaultConfig()
	cfg.Workers = 1
	cfg.Pin = true
	cfg.CPUs = []int{bad}
	_, err = New(cfg, core.SchedulerParams{Tasks: core.NewTaskSet(nil)})
	var ce *core.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "cpus[0]", ce.Key)
}

func TestCPUListsReadAsRanges(t *testing.T) {
	assert.Equal(t, "0-3, 6, 8-9", cpuList([]int{0, 1, 2, 3, 6, 8, 9}))
	assert.Equal(t, "5", cpuList([]int{5}))
	assert.Equal(t, "", cpuList(nil))
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
