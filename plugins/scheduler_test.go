package plugins_test

import (
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/rt"
)

func schedulerOptions(t *testing.T) plugins.SchedulerOptions {
	return plugins.SchedulerOptions{
		Launch:  plugins.LaunchConfig{Path: prioBin, SHA256: digest(t, prioSum)},
		Restart: plugins.RestartPolicy{Backoff: 5 * time.Millisecond},
		// Far beyond any answer's time: a verdict never depends on the
		// fallback.
		DecisionTimeout: time.Minute,
	}
}

// The plugin scheduler with the priority policy out of process: every
// behaviour of the scheduler suite builds a runtime, and so a policy
// process, of its own.
func TestSchedulerConformanceOutOfProcess(t *testing.T) {
	conformance.Scheduler(t, func(p core.SchedulerParams) (core.Scheduler, error) {
		return plugins.NewScheduler(schedulerOptions(t), p)
	})
}

// prioritised spawns, from one poll of the root, tasks whose priorities
// cycle through prios and records the order of their first polls.
func prioritised(t *testing.T, r *rt.Runtime, n int, prios []int) []int {
	t.Helper()
	var mu sync.Mutex
	var order []int
	err := run(t, r, 30*time.Second, func(c *co) error {
		hs := make([]*core.JoinHandle[core.Unit], n)
		for i := range hs {
			hs[i] = plugins.SpawnWith(c.cx, plugins.TaskInfo{Priority: prios[i%len(prios)], Name: "task"},
				core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					return core.Unit{}, true
				}))
		}
		for _, h := range hs {
			if _, err := awaitR(c, core.Future[core.Result[core.Unit]](h)); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	return order
}

// wantPriorityOrder is the order the priority policy must produce: higher
// priority first, spawn order within a priority.
func wantPriorityOrder(n int, prios []int) []int {
	want := make([]int, n)
	for i := range want {
		want[i] = i
	}
	sort.SliceStable(want, func(a, b int) bool { return prios[want[a]%len(prios)] > prios[want[b]%len(prios)] })
	return want
}

func TestThePriorityPolicyOrderIsObserved(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("plugin").
		Set("scheduler.path", prioBin).Set("scheduler.sha256", prioSum).
		Set("scheduler.decision_timeout", "1m").Build()
	require.NoError(t, err)
	prios := []int{0, 7, -3, 7, 2}
	const n = 40
	got := prioritised(t, r, n, prios)
	assert.Equal(t, wantPriorityOrder(n, prios), got)
	// A second batch on the same runtime: the policy keeps no stale state.
	got = prioritised(t, r, n, []int{1, 2, 3})
	assert.Equal(t, wantPriorityOrder(n, []int{1, 2, 3}), got)
	require.NoError(t, r.Close())
	goleak.VerifyNone(t, ignore)
}

// Tasks spawned with SpawnWith from a goroutine outside the runtime reach
// the policy with their priorities: they run in priority order too.
func TestSpawnWithFromAnotherGoroutineTellsThePolicyThePriority(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		return plugins.NewScheduler(schedulerOptions(t), p)
	}).Build()
	require.NoError(t, err)
	prios := []int{0, 7, -3, 7, 2}
	const n = 25
	var mu sync.Mutex
	var order []int
	err = run(t, r, 30*time.Second, func(c *co) error {
		// Every spawn happens while the root's poll waits here, so the
		// scheduler hands all of them to the policy at once.
		spawned := make(chan []*core.JoinHandle[core.Unit])
		go func() {
			hs := make([]*core.JoinHandle[core.Unit], n)
			for i := range hs {
				hs[i] = plugins.SpawnWith(r, plugins.TaskInfo{Priority: prios[i%len(prios)]},
					core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
						mu.Lock()
						order = append(order, i)
						mu.Unlock()
						return core.Unit{}, true
					}))
			}
			spawned <- hs
		}()
		for _, h := range <-spawned {
			if _, err := awaitR(c, core.Future[core.Result[core.Unit]](h)); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	mu.Lock()
	assert.Equal(t, wantPriorityOrder(n, prios), order)
	mu.Unlock()
	require.NoError(t, r.Close())
	goleak.VerifyNone(t, ignore)
}

// Killing the policy process leaves the runtime running (FIFO order
// meanwhile); the restarted policy orders tasks again.
func TestASchedulerPolicyCrashFallsBackToFIFOAndRestarts(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	var sched *plugins.Scheduler
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		s, err := plugins.NewScheduler(schedulerOptions(t), p)
		sched = s
		return s, err
	}).Build()
	require.NoError(t, err)
	prios := []int{1, 5, 3}
	const n = 30
	assert.Equal(t, wantPriorityOrder(n, prios), prioritised(t, r, n, prios))

	require.NoError(t, sched.KillProcess())
	// Whatever the order while the policy is away, every task runs once.
	for range 5 {
		got := prioritised(t, r, n, prios)
		slices.Sort(got)
		require.Equal(t, wantPriorityOrder(n, []int{0}), got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for sched.Restarts() < 1 || !running(sched) {
		require.True(t, time.Now().Before(deadline), "the policy was not restarted")
		time.Sleep(5 * time.Millisecond)
	}
	assert.Equal(t, wantPriorityOrder(n, prios), prioritised(t, r, n, prios))
	st := sched.Stats()
	assert.NotZero(t, st.Decided)
	require.NoError(t, r.Close())
	goleak.VerifyNone(t, ignore)
}

func running(s *plugins.Scheduler) bool {
	for _, st := range plugins.List() {
		if st.Section == core.KindScheduler && st.State == "running" {
			return true
		}
	}
	return false
}
