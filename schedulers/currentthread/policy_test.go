package currentthread_test

import (
	"container/heap"
	"fmt"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/currentthread"
)

// priorityPolicy is a user-written policy in plain Go: the runnable task
// of highest priority runs first, tasks of equal priority in the order
// they became runnable. A task's priority is what prio maps its id to (0
// when absent), set by the test before it spawns the task.
type priorityPolicy struct {
	prio map[core.TaskID]int
	q    prioHeap
	seq  uint64
}

func newPriorityPolicy() *priorityPolicy { return &priorityPolicy{prio: map[core.TaskID]int{}} }

type prioEntry struct {
	t    *core.Task
	prio int
	seq  uint64
}

type prioHeap []prioEntry

func (h prioHeap) Len() int { return len(h) }
func (h prioHeap) Less(i, j int) bool {
	if h[i].prio != h[j].prio {
		return h[i].prio > h[j].prio
	}
	return h[i].seq < h[j].seq
}
func (h prioHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *prioHeap) Push(x any)   { *h = append(*h, x.(prioEntry)) }
func (h *prioHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func (p *priorityPolicy) add(t *core.Task) {
	p.seq++
	heap.Push(&p.q, prioEntry{t: t, prio: p.prio[t.ID()], seq: p.seq})
}

func (p *priorityPolicy) Spawned(t *core.Task) { p.add(t) }
func (p *priorityPolicy) Woken(t *core.Task)   { p.add(t) }
func (p *priorityPolicy) Next() *core.Task {
	if p.q.Len() == 0 {
		return nil
	}
	return heap.Pop(&p.q).(prioEntry).t
}
func (p *priorityPolicy) Completed(t *core.Task) { delete(p.prio, t.ID()) }

// withPolicy returns a runtime on a current-thread scheduler driven by pol.
func withPolicy(t *testing.T, pol currentthread.Policy) *rt.Runtime {
	t.Helper()
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		return currentthread.NewWithPolicy(currentthread.DefaultConfig(), p, pol)
	}).Build()
	require.NoError(t, err)
	return r
}

// spawnPrioritised is a root task: on its first poll it spawns one task per
// priority in prios (task i records i when it runs), telling pol each
// task's priority; then it awaits them all.
type spawnPrioritised struct {
	pol   *priorityPolicy
	prios []int
	mu    *sync.Mutex
	order *[]int
	hs    []*core.JoinHandle[core.Unit]
}

func (s *spawnPrioritised) Poll(cx *core.Context) (core.Unit, bool) {
	if s.hs == nil {
		for i, pr := range s.prios {
			task, h := core.NewTask(core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
				s.mu.Lock()
				*s.order = append(*s.order, i)
				s.mu.Unlock()
				return core.Unit{}, true
			})))
			s.pol.prio[task.ID()] = pr
			if err := cx.SpawnTask(task); err != nil {
				panic(err)
			}
			s.hs = append(s.hs, h)
		}
	}
	for len(s.hs) > 0 {
		if _, ok := s.hs[0].Poll(cx); !ok {
			return core.Unit{}, false
		}
		s.hs = s.hs[1:]
	}
	return core.Unit{}, true
}

func TestAUserPolicyInPlainGoDecidesTheRunOrder(t *testing.T) {
	pol := newPriorityPolicy()
	r := withPolicy(t, pol)
	defer r.Close()
	prios := []int{0, 7, -3, 7, 2, 5, 0, -3, 9, 1}
	var mu sync.Mutex
	var order []int
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnPrioritised{pol: pol, prios: prios, mu: &mu, order: &order}))
	require.NoError(t, err)

	want := make([]int, len(prios))
	for i := range want {
		want[i] = i
	}
	sort.SliceStable(want, func(a, b int) bool { return prios[want[a]] > prios[want[b]] })
	assert.Equal(t, want, order, "higher priority first, spawn order within a priority")
	assert.NotEqual(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, want, "the expected order is not the default FIFO")
}

// recorder wraps a policy and records every call it receives, as
// "spawned 3", "woken 3", "next 3", "completed 3", "close".
type recorder struct {
	currentthread.Policy
	mu    sync.Mutex
	calls []string
	names map[core.TaskID]string
}

func (r *recorder) log(what string, t *core.Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t == nil {
		r.calls = append(r.calls, what)
		return
	}
	name, ok := r.names[t.ID()]
	if !ok {
		name = "root"
	}
	r.calls = append(r.calls, what+" "+name)
}

func (r *recorder) Spawned(t *core.Task) { r.log("spawned", t); r.Policy.Spawned(t) }
func (r *recorder) Woken(t *core.Task)   { r.log("woken", t); r.Policy.Woken(t) }
func (r *recorder) Next() *core.Task {
	t := r.Policy.Next()
	if t != nil {
		r.log("next", t)
	}
	return t
}
func (r *recorder) Completed(t *core.Task) { r.log("completed", t); r.Policy.Completed(t) }
func (r *recorder) Close() error           { r.log("close", nil); return nil }

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// A task spawned from another goroutine reaches the policy as spawned, a
// task woken from another goroutine as woken, each polled task is the
// policy's choice and each completion is reported; Close comes last.
func TestThePolicyHearsOfRemoteSpawnsAndWakesAndIsClosedLast(t *testing.T) {
	rec := &recorder{Policy: newPriorityPolicy(), names: map[core.TaskID]string{}}
	r := withPolicy(t, rec)

	// The remote task waits once for a wake from another goroutine.
	var waker core.Waker
	woke := make(chan struct{})
	polls := 0
	remote, h := core.NewTask(core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		polls++
		if polls == 1 {
			waker = cx.Waker()
			close(woke)
			return core.Unit{}, false
		}
		return core.Unit{}, true
	})))
	rec.names[remote.ID()] = "remote"

	// The root spawns the remote task from another goroutine, waits for
	// its first poll, wakes it from another goroutine and joins it.
	var spawned, rewoken bool
	root := core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if !spawned {
			spawned = true
			w := cx.Waker()
			go func() {
				if err := r.SpawnTask(remote); err != nil {
					panic(err)
				}
				<-woke
				w.Wake()
			}()
			return core.Unit{}, false
		}
		if !rewoken {
			select {
			case <-woke:
			default:
				return core.Unit{}, false
			}
			rewoken = true
			go waker.Wake()
		}
		if _, ok := h.Poll(cx); !ok {
			return core.Unit{}, false
		}
		return core.Unit{}, true
	})
	_, err := rt.BlockOn(r, core.Future[core.Unit](root))
	require.NoError(t, err)
	require.NoError(t, r.Close())

	calls := rec.snapshot()
	assert.Contains(t, calls, "spawned remote")
	assert.Contains(t, calls, "woken remote")
	assert.Equal(t, 1, count(calls, "spawned remote"), "spawned once: %v", calls)
	assert.Equal(t, 2, count(calls, "next remote"), "polled twice: %v", calls)
	assert.Equal(t, 1, count(calls, "completed remote"), "%v", calls)
	assert.Less(t, slices.Index(calls, "spawned remote"), slices.Index(calls, "woken remote"), "%v", calls)
	assert.Equal(t, "close", calls[len(calls)-1], "%v", calls)
	assert.Equal(t, 1, count(calls, "close"), "%v", calls)
	for _, c := range calls {
		if c == "spawned root" {
			return
		}
	}
	t.Fatalf("the root was not reported spawned: %v", calls)
}

func count(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// loser is a policy that drops every task it is handed.
type loser struct{}

func (loser) Spawned(*core.Task)   {}
func (loser) Woken(*core.Task)     {}
func (loser) Next() *core.Task     { return nil }
func (loser) Completed(*core.Task) {}

func TestAPolicyThatLosesATaskIsReportedByName(t *testing.T) {
	r := withPolicy(t, loser{})
	defer r.ShutdownBackground()
	var got any
	func() {
		defer func() { got = recover() }()
		_, _ = rt.BlockOn(r, core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
			return core.Unit{}, true
		})))
	}()
	require.NotNil(t, got, "BlockOn ran on although the policy lost the root")
	assert.Contains(t, fmt.Sprint(got), "currentthread_test.loser returned no task while holding 1 runnable")
}

func TestNewWithPolicyRefusesANilPolicy(t *testing.T) {
	_, err := currentthread.NewWithPolicy(currentthread.DefaultConfig(), core.SchedulerParams{}, nil)
	require.ErrorContains(t, err, "needs a policy")
}

// The scheduler suite on a current-thread scheduler whose every run
// decision is the priority policy's (all tasks at priority 0: FIFO, as
// the policy decides it, not the scheduler's run queue).
func TestConformanceWithAPolicy(t *testing.T) {
	conformance.Scheduler(t, func(p core.SchedulerParams) (core.Scheduler, error) {
		return currentthread.NewWithPolicy(currentthread.DefaultConfig(), p, newPriorityPolicy())
	})
}

// The task utilities and coroutine tasks on the same.
func TestTasksConformanceWithAPolicy(t *testing.T) {
	conformance.Tasks(t, func(b *rt.Builder) {
		b.SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
			return currentthread.NewWithPolicy(currentthread.DefaultConfig(), p, newPriorityPolicy())
		})
	})
}
