package main

import (
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

var runCommand = &command{
	name:    "run",
	summary: "build the configured runtime and run a check workload on it",
	usage: `usage: weft run [-config FILE] [-tasks N]

Run builds the runtime the configuration describes (defaults, then FILE,
then WEFT_ environment variables), prints the composition, and runs a
check workload on it: N tasks spawned from a task and joined, the same from
a goroutine outside the runtime, tasks yielding in turn, and a call on the
blocking pool. It prints what each step took and the scheduler's metrics,
then shuts the runtime down. It exits 1 if the runtime cannot be built or a
step fails.
`,
}

func init() { runCommand.run = runRun }

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(runCommand, stderr)
	path := fs.String("config", "", "configuration file (YAML, TOML or JSON)")
	tasks := fs.Int("tasks", 100_000, "tasks per step")
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() != 0 || *tasks < 1 {
		fs.Usage()
		return exitUsage
	}
	r, err := rt.NewBuilder().ConfigFile(*path).Build()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitProblem
	}
	fmt.Fprintf(stdout, "weft %s: runtime %q\n", Version, r.Composition().Runtime.Name)
	for _, k := range core.Kinds {
		fmt.Fprintf(stdout, "  %-9s %s\n", k, r.Composition().Selection(k).Name)
	}
	fmt.Fprintln(stdout)

	steps := []struct {
		name string
		run  func(*rt.Runtime, int) error
	}{
		{"spawn and join from a task", stepSpawnLocal},
		{"spawn from a goroutine", stepSpawnRemote},
		{"yield in turn (200 tasks)", stepYield},
		{"blocking pool call", stepBlocking},
	}
	failed := false
	for _, s := range steps {
		start := time.Now()
		err := s.run(r, *tasks)
		el := time.Since(start)
		if err != nil {
			failed = true
			fmt.Fprintf(stdout, "  FAIL  %-28s %v\n", s.name, err)
			continue
		}
		fmt.Fprintf(stdout, "  ok    %-28s %v\n", s.name, el.Round(time.Microsecond))
	}
	fmt.Fprintln(stdout)
	for _, m := range r.Metrics() {
		fmt.Fprintf(stdout, "  worker %d: polls=%d parks=%d local=%d remote=%d lifo=%d steals=%d budget-yields=%d mean-poll=%.0fns\n",
			m.Worker, m.Polls, m.Parks, m.LocalSchedules, m.RemoteSchedules, m.LIFOHits, m.Steals, m.BudgetYields, m.MeanPollNanos)
	}
	if err := r.Close(); err != nil {
		fmt.Fprintln(stderr, err)
		failed = true
	}
	if failed {
		return exitProblem
	}
	return exitOK
}

// joinEach is a root future that spawns n tasks from inside itself and
// awaits each handle.
type joinEach struct {
	n, next int
	hs      []*core.JoinHandle[int]
	sum     int
}

func (j *joinEach) Poll(cx *core.Context) (int, bool) {
	if j.hs == nil {
		j.hs = make([]*core.JoinHandle[int], j.n)
		for i := range j.hs {
			v := i
			j.hs[i] = core.Spawn(cx, core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { return v, true })))
		}
	}
	for ; j.next < len(j.hs); j.next++ {
		res, ok := j.hs[j.next].Poll(cx)
		if !ok {
			return 0, false
		}
		if res.Err != nil {
			panic(res.Err)
		}
		j.sum += res.Value
	}
	return j.sum, true
}

func wantSum(n int) int { return n * (n - 1) / 2 }

func stepSpawnLocal(r *rt.Runtime, n int) error {
	got, err := rt.BlockOn(r, core.Future[int](&joinEach{n: n}))
	if err != nil {
		return err
	}
	if got != wantSum(n) {
		return fmt.Errorf("sum of task results is %d, want %d", got, wantSum(n))
	}
	return nil
}

func stepSpawnRemote(r *rt.Runtime, n int) error {
	var done atomic.Int64
	var all core.AtomicWaker
	for i := 0; i < n; i++ {
		rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
			if done.Add(1) == int64(n) {
				all.Wake()
			}
			return core.Unit{}, true
		})))
	}
	_, err := rt.BlockOn(r, core.Future[int64](core.PollFunc[int64](func(cx *core.Context) (int64, bool) {
		all.Register(cx.Waker())
		v := done.Load()
		return v, v == int64(n)
	})))
	return err
}

func stepYield(r *rt.Runtime, n int) error {
	const tasks = 200
	per := n / tasks
	var total atomic.Int64
	j := &joinEach{n: 0}
	j.hs = make([]*core.JoinHandle[int], 0, tasks)
	_, err := rt.BlockOn(r, core.Future[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
		if len(j.hs) == 0 {
			for i := 0; i < tasks; i++ {
				left := per
				var y core.Future[core.Unit]
				j.hs = append(j.hs, core.Spawn(cx, core.Future[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
					for {
						if y != nil {
							if _, ok := y.Poll(cx); !ok {
								return 0, false
							}
							y = nil
						}
						if left == 0 {
							return 0, true
						}
						left--
						total.Add(1)
						y = core.Yield()
					}
				}))))
			}
		}
		return j.Poll(cx)
	})))
	if err != nil {
		return err
	}
	if total.Load() != int64(per*tasks) {
		return fmt.Errorf("%d yields, want %d", total.Load(), per*tasks)
	}
	return nil
}

func stepBlocking(r *rt.Runtime, _ int) error {
	var h *core.JoinHandle[int]
	got, err := rt.BlockOn(r, core.Future[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
		if h == nil {
			h = rt.SpawnBlocking(r.Handle(), func() int { time.Sleep(time.Millisecond); return 42 })
		}
		res, ok := h.Poll(cx)
		return res.Value, ok
	})))
	if err != nil {
		return err
	}
	if got != 42 {
		return fmt.Errorf("blocking call returned %d, want 42", got)
	}
	return nil
}
