package bench_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	// The facade registers the built-in schedulers and timers.
	_ "github.com/weftrt/weft"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/tools/bench"
)

// testScale makes every workload small enough for a unit test: W1 spawns
// 200 tasks, W7a has 100 sleepers (still up to 100 ms of sleeping).
const testScale = 0.001

// load returns the composition of the defaults with overrides, ignoring
// the environment, with extra modules visible.
func load(t *testing.T, overrides map[string]any, extra ...core.Module) *config.Composition {
	t.Helper()
	comp, err := config.LoadWith(config.LoadOptions{Overrides: overrides, Modules: extra})
	require.NoError(t, err)
	return comp
}

// currentThread is the default composition on the currentthread
// scheduler, whatever the default scheduler is.
func currentThread(t *testing.T) *config.Composition {
	return load(t, map[string]any{"scheduler.kind": "currentthread"})
}

// alias is a scheduler module that is currentthread under another name, so
// a test can configure "some other scheduler" and get a comparison column.
func alias(t *testing.T) core.Module {
	ct, err := core.Lookup(core.KindScheduler, "currentthread")
	require.NoError(t, err)
	return core.Module{Kind: core.KindScheduler, Name: "alias", Doc: "currentthread under another name", NewConfig: ct.NewConfig, New: ct.New}
}

func run(t *testing.T, opts bench.Options, ws ...*bench.Workload) []bench.Result {
	t.Helper()
	if opts.Scale == 0 {
		opts.Scale = testScale
	}
	res, err := bench.Run(opts, ws)
	require.NoError(t, err)
	require.Len(t, res, len(ws))
	return res
}

func TestEveryWorkloadRunsOnTheDefaultCompositionCurrentThreadAndPlainGoAtASmallScale(t *testing.T) {
	comps := []bench.Composition{{Name: "weft", Comp: load(t, nil)}, {Name: "currentthread", Comp: currentThread(t)}}
	res := run(t, bench.Options{Compositions: comps, Runs: 2}, bench.Workloads...)
	for _, r := range res {
		w := r.Workload
		if w.Pending != "" {
			assert.Equal(t, w.Pending, r.Skipped, w.ID)
			assert.False(t, r.Measured(), w.ID)
			continue
		}
		require.NoError(t, r.Err, w.ID)
		require.True(t, r.Measured(), w.ID)
		assert.Equal(t, bench.Scaled(w.Size, testScale), r.N, w.ID)
		require.Len(t, r.Weft, 2, w.ID)
		for _, s := range r.Weft {
			assert.Len(t, s.Runs, 2, w.ID)
			assert.Positive(t, s.Min, w.ID)
		}
		assert.Len(t, r.Go.Runs, 2, w.ID)
		assert.Positive(t, r.Go.Min, w.ID)
		assert.Equal(t, bench.Ratio(w.Better, r.Weft[0].Median, r.Go.Median), r.Ratio, w.ID)
	}
}

func TestProgressNamesEachWorkloadAndRunWithEverySubject(t *testing.T) {
	var progress bytes.Buffer
	comps := []bench.Composition{
		{Name: "weft", Comp: load(t, map[string]any{"scheduler.kind": "alias"}, alias(t))},
		{Name: "currentthread", Comp: currentThread(t)},
	}
	ws, err := bench.Lookup("W1", "W9")
	require.NoError(t, err)
	pending := *ws[1]
	pending.Pending = "not written yet (a pending workload, for the test)"
	ws[1] = &pending
	run(t, bench.Options{Compositions: comps, Runs: 2, Progress: &progress}, ws...)
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	require.Len(t, lines, 4, progress.String())
	assert.Regexp(t, `^W1 spawn_local: warm-up: weft \S+ currentthread \S+ go \S+ ns/task$`, lines[0])
	assert.Regexp(t, `^W1 spawn_local: run 1/2: weft \S+ currentthread \S+ go \S+ ns/task$`, lines[1])
	assert.Regexp(t, `^W1 spawn_local: run 2/2: `, lines[2])
	assert.Equal(t, "W9 tcp_stream: skipped: "+ws[1].Pending, lines[3])
}

func TestEachCompositionGetsItsOwnFiguresAndRatio(t *testing.T) {
	comps := []bench.Composition{
		{Name: "weft", Comp: load(t, map[string]any{"scheduler.kind": "alias"}, alias(t))},
		{Name: "currentthread", Comp: currentThread(t)},
	}
	ws, err := bench.Lookup("W5")
	require.NoError(t, err)
	r := run(t, bench.Options{Compositions: comps, Runs: 3}, ws...)[0]
	require.True(t, r.Measured(), r.Err)
	require.Len(t, r.Weft, 2)
	require.Len(t, r.Ratios, 2)
	for i, s := range r.Weft {
		assert.Len(t, s.Runs, 3)
		assert.Equal(t, bench.Ratio(bench.LowerIsBetter, s.Median, r.Go.Median), r.Ratios[i])
	}
	assert.Equal(t, r.Ratios[0], r.Ratio)
}

func TestTimerWorkloadsAreSkippedWithoutATimerOrARealClock(t *testing.T) {
	ws, err := bench.Lookup("W7a", "W7b")
	require.NoError(t, err)
	for overrides, why := range map[string]string{
		"timer.kind": "the weft composition has no timer (timer.kind: none)",
		"clock.kind": `the weft composition's clock is "virtual"; timer workloads measure real time`,
	} {
		value := "none"
		if overrides == "clock.kind" {
			value = "virtual"
		}
		comp := load(t, map[string]any{overrides: value})
		for _, r := range run(t, bench.Options{Compositions: []bench.Composition{{Name: "weft", Comp: comp}}, Runs: 1}, ws...) {
			assert.Equal(t, why, r.Skipped, r.Workload.ID)
		}
	}
}

func TestWithSchedulerReplacesTheSchedulerAndKeepsEverythingElse(t *testing.T) {
	comp := load(t, map[string]any{"scheduler.kind": "alias", "scheduler.event_interval": 7, "timer.kind": "heap", "runtime.name": "svc"}, alias(t))
	ct, err := bench.WithScheduler(comp, "currentthread")
	require.NoError(t, err)
	assert.Equal(t, "currentthread", ct.Scheduler.Name)
	assert.Contains(t, ct.String(), "scheduler.event_interval")
	assert.NotContains(t, ct.String(), "scheduler.event_interval = 7", "the other scheduler's keys are not carried over")
	assert.Equal(t, "heap", ct.Timer.Name)
	assert.Equal(t, "svc", ct.Runtime.Name)
	assert.Equal(t, "alias", comp.Scheduler.Name, "the configured composition is left alone")
}

// failing is a workload whose weft side fails on its third call (the
// second measured run).
func failing() *bench.Workload {
	calls := 0
	return &bench.Workload{
		ID: "X1", Name: "fails", Unit: "ns/op", Size: 1,
		Weft: func(*rt.Runtime, int) (float64, error) {
			calls++
			if calls == 3 {
				return 0, errors.New("boom")
			}
			return 1, nil
		},
		Go: func(int) (float64, error) { return 1, nil },
	}
}

func TestAFailingRunStopsItsWorkloadNamingTheRunAndTheSubject(t *testing.T) {
	comp := load(t, nil)
	ws, err := bench.Lookup("W1")
	require.NoError(t, err)
	res := run(t, bench.Options{Compositions: []bench.Composition{{Name: "weft", Comp: comp}}, Runs: 3}, failing(), ws[0])
	require.Error(t, res[0].Err)
	assert.Equal(t, "X1 fails run 2 on weft: boom", res[0].Err.Error())
	assert.False(t, res[0].Measured())
	assert.True(t, res[1].Measured(), "the next workload still runs")
}

// forever never completes.
type forever struct{}

func (forever) Poll(*core.Context) (core.Unit, bool) { return core.Unit{}, false }

func TestARunStillGoingAfterTheRunTimeoutHasItsRuntimeShutDown(t *testing.T) {
	hang := &bench.Workload{
		ID: "X2", Name: "hangs", Unit: "ns/op", Size: 1,
		Weft: func(r *rt.Runtime, _ int) (float64, error) {
			_, err := rt.BlockOn(r, core.Future[core.Unit](forever{}))
			return 1, err
		},
		Go: func(int) (float64, error) { return 1, nil },
	}
	comp := load(t, nil)
	res := run(t, bench.Options{Compositions: []bench.Composition{{Name: "weft", Comp: comp}}, Runs: 1, RunTimeout: 10 * time.Millisecond}, hang)
	require.Error(t, res[0].Err)
	assert.Contains(t, res[0].Err.Error(), "X2 hangs warm-up on weft: did not finish within 10ms")
}

func TestRunRefusesACompositionThatCannotBeBuilt(t *testing.T) {
	broken := core.Module{Kind: core.KindScheduler, Name: "broken", Doc: "fails to build",
		New: func(any, any) (any, error) { return nil, errors.New("no cores today") }}
	comp := load(t, map[string]any{"scheduler.kind": "broken"}, broken)
	_, err := bench.Run(bench.Options{Compositions: []bench.Composition{{Name: "weft", Comp: comp}}, Runs: 1}, bench.Workloads)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "building the weft runtime")
	assert.Contains(t, err.Error(), "no cores today")
}
