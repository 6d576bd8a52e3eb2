package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

// tiny scales the workloads down so a run takes milliseconds (W7a still
// sleeps up to 100 ms).
const tiny = "--scale=0.001"

func init() {
	// bench-alias is currentthread under another name: configuring it is
	// configuring "another scheduler", which brings in the currentthread
	// comparison column.
	ct, err := core.Lookup(core.KindScheduler, "currentthread")
	if err != nil {
		panic(err)
	}
	core.Register(core.Module{
		Kind: core.KindScheduler, Name: "bench-alias", Doc: "currentthread under another name, for the bench tests",
		NewConfig: ct.NewConfig, New: ct.New,
	})
}

func TestBenchRejectsAnUnknownWorkloadListingTheValidIDs(t *testing.T) {
	status, stdout, stderr := weft("bench", tiny, "W1", "W99")
	assert.Equal(t, exitUsage, status)
	assert.Empty(t, stdout)
	assert.Equal(t, `weft bench: unknown workload "W99" (valid: W1, W2, W3, W4, W5, W6, W7a, W7b, W8, W8cpu, W9, W10, W11, W11rel, W12a, W12b, W12c)`+"\n", stderr)
}

func TestBenchRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "--runs", "0", "W1"},
		{"bench", "--runs", "many"},
		{"bench", "--scale", "0"},
		{"bench", "--bogus"},
	} {
		status, stdout, stderr := weft(args...)
		assert.Equal(t, exitUsage, status, args)
		assert.Empty(t, stdout, args)
		assert.NotEmpty(t, stderr, args)
	}
}

func TestBenchRunsOneWorkloadOnceAndPrintsItsRow(t *testing.T) {
	path := writeFile(t, "weft.yaml", "scheduler: {kind: currentthread}\n")
	status, stdout, stderr := weft("bench", "--config", path, "--runs", "1", tiny, "W1")
	require.Equal(t, exitOK, status, stderr)
	assert.Contains(t, stderr, "W1 spawn_local: warm-up: weft ")
	assert.Regexp(t, `(?m)^W1 spawn_local: run 1/1: weft \S+ go \S+ ns/task$`, stderr)
	assert.Contains(t, stdout, "1 run each after a warm-up")
	assert.Contains(t, stdout, "sizes scaled by 0.001")
	assert.Contains(t, stdout, "weft: scheduler currentthread, timer wheel, driver epoll, clock real\n")
	assert.Regexp(t, `(?m)^ID +NAME +UNIT +WEFT +GO +RATIO +TARGET +MET$`, stdout, "no comparison column when currentthread is configured")
	assert.Regexp(t, `(?m)^W1 +spawn_local +ns/task +\S+ \[\S+–\S+\] +\S+ \[\S+–\S+\] +\S+x +>= 2\.0x +(yes|no)$`, stdout)
	assert.NotContains(t, stdout, "W2")
}

func TestBenchTakesFlagsAfterTheIDs(t *testing.T) {
	status, stdout, stderr := weft("bench", "W5", "--runs", "1", tiny)
	require.Equal(t, exitOK, status, stderr)
	assert.Regexp(t, `(?m)^W5 +chained_spawn `, stdout)
}

func TestBenchWritesJSONThatDecodesToTheTableFigures(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.json")
	status, _, stderr := weft("bench", "--runs", "2", tiny, "--json", path, "W3", "W9")
	require.Equal(t, exitOK, status, stderr)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Machine struct {
			CPU        string `json:"cpu"`
			Cores      int    `json:"cores"`
			GOMAXPROCS int    `json:"gomaxprocs"`
			Go         string `json:"go"`
			OS         string `json:"os"`
			Arch       string `json:"arch"`
		} `json:"machine"`
		Command string         `json:"command"`
		Scale   float64        `json:"scale"`
		Config  map[string]any `json:"config"`
		Results []struct {
			ID       string    `json:"id"`
			Name     string    `json:"name"`
			Unit     string    `json:"unit"`
			Weft     *float64  `json:"weft"`
			Go       *float64  `json:"go"`
			WeftMin  *float64  `json:"weft_min"`
			WeftMax  *float64  `json:"weft_max"`
			GoMin    *float64  `json:"go_min"`
			GoMax    *float64  `json:"go_max"`
			Ratio    *float64  `json:"ratio"`
			WeftRuns []float64 `json:"weft_runs"`
			Skipped  string    `json:"skipped"`
		} `json:"results"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc), string(raw))
	assert.NotEmpty(t, doc.Machine.CPU)
	assert.Positive(t, doc.Machine.Cores)
	assert.Positive(t, doc.Machine.GOMAXPROCS)
	assert.True(t, strings.HasPrefix(doc.Machine.Go, "go"), doc.Machine.Go)
	assert.NotEmpty(t, doc.Machine.OS)
	assert.NotEmpty(t, doc.Machine.Arch)
	assert.Equal(t, "weft bench --runs 2 "+tiny+" --json "+path+" W3 W9", doc.Command)
	assert.Equal(t, 0.001, doc.Scale)
	assert.Equal(t, config.DefaultKind(core.KindScheduler), doc.Config["scheduler.kind"])

	require.Len(t, doc.Results, 2)
	w3 := doc.Results[0]
	assert.Equal(t, "W3", w3.ID)
	assert.Equal(t, "yield_many", w3.Name)
	assert.Equal(t, "ns/yield", w3.Unit)
	require.NotNil(t, w3.Weft)
	require.NotNil(t, w3.Go)
	require.NotNil(t, w3.Ratio)
	assert.Len(t, w3.WeftRuns, 2)
	assert.LessOrEqual(t, *w3.WeftMin, *w3.Weft)
	assert.LessOrEqual(t, *w3.Weft, *w3.WeftMax)
	assert.LessOrEqual(t, *w3.GoMin, *w3.Go)
	assert.LessOrEqual(t, *w3.Go, *w3.GoMax)
	assert.InDelta(t, *w3.Go / *w3.Weft, *w3.Ratio, 1e-9, "times: the ratio is go/weft")
	w9 := doc.Results[1]
	assert.Equal(t, "W9", w9.ID)
	require.NotNil(t, w9.Weft, w9.Skipped)
	require.NotNil(t, w9.Go)
	require.NotNil(t, w9.Ratio)
	assert.InDelta(t, *w9.Weft / *w9.Go, *w9.Ratio, 1e-9, "rates: the ratio is weft/go")
}

func TestBenchComparesWithCurrentThreadWhenAnotherSchedulerIsConfigured(t *testing.T) {
	path := writeFile(t, "weft.yaml", "scheduler: {kind: bench-alias, event_interval: 13}\n")
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	status, stdout, stderr := weft("bench", "--config", path, "--runs", "1", tiny, "--json", jsonPath, "W2")
	require.Equal(t, exitOK, status, stderr)
	assert.Regexp(t, `(?m)^W2 spawn_remote: run 1/1: weft \S+ currentthread \S+ go \S+ ns/task$`, stderr)
	assert.Contains(t, stdout, "weft: scheduler bench-alias, ")
	assert.Contains(t, stdout, "currentthread: scheduler currentthread, ")
	assert.Regexp(t, `(?m)^ID +NAME +UNIT +WEFT +CURRENTTHREAD +GO +RATIO +TARGET +MET$`, stdout)

	raw, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var doc struct {
		Config  map[string]any            `json:"config"`
		Compare map[string]map[string]any `json:"compare"`
		Results []map[string]any          `json:"results"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, "bench-alias", doc.Config["scheduler.kind"])
	assert.Equal(t, 13.0, doc.Config["scheduler.event_interval"])
	assert.Equal(t, 61.0, doc.Compare["currentthread"]["scheduler.event_interval"], "currentthread runs with its own defaults")
	require.Len(t, doc.Results, 1)
	assert.Contains(t, doc.Results[0], "currentthread")
	assert.Contains(t, doc.Results[0], "currentthread_ratio")
}

func TestBenchSkipsTheTimerWorkloadsWithoutATimer(t *testing.T) {
	path := writeFile(t, "weft.toml", "[timer]\nkind = \"none\"\n[scheduler]\nkind = \"currentthread\"\n")
	status, stdout, stderr := weft("bench", "--config", path, "--runs", "1", tiny, "W7a", "W7b")
	require.Equal(t, exitOK, status, stderr)
	assert.Regexp(t, `(?m)^W7a +timers_sleep +ms +- +- +- +<= \S+ ms \(1\.5x ideal\) +skipped: the weft composition has no timer \(timer\.kind: none\)$`, stdout)
	assert.Regexp(t, `(?m)^W7b +timers_churn +ns/op +- +- +- +>= 3\.0x +skipped: the weft composition has no timer`, stdout)
}

func TestBenchExitsOneWhenTheRuntimeCannotBeBuiltOrConfigured(t *testing.T) {
	path := writeFile(t, "weft.yaml", "scheduler: {kind: test-sched}\n")
	status, stdout, stderr := weft("bench", "--config", path, tiny, "W1")
	assert.Equal(t, exitProblem, status)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "weft bench: building the weft runtime")

	path = writeFile(t, "bad.yaml", "scheduler: {kind: workstealer}\n")
	status, _, stderr = weft("bench", "--config", path, tiny, "W1")
	assert.Equal(t, exitProblem, status)
	assert.Contains(t, stderr, `"scheduler.kind": unknown scheduler "workstealer"`)
}

func TestBenchExitsOneWhenTheJSONFileCannotBeWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing", "out.json")
	status, _, stderr := weft("bench", "--runs", "1", tiny, "--json", path, "W9")
	assert.Equal(t, exitProblem, status)
	assert.Contains(t, stderr, path)
}

func TestHelpBenchShowsItsUsage(t *testing.T) {
	status, stdout, _ := weft("help", "bench")
	assert.Equal(t, exitOK, status)
	assert.Contains(t, stdout, "usage: weft bench [--config FILE] [--json FILE] [--runs N] [ID ...]")
	assert.NotContains(t, stdout, "scale")
}

func TestBenchComparesTheOtherTimerModuleOnTheTimerWorkloadsOnly(t *testing.T) {
	path := writeFile(t, "weft.yaml", "scheduler: {kind: currentthread}\ntimer: {kind: wheel}\n")
	status, stdout, stderr := weft("bench", "--config", path, "--runs", "1", tiny, "W1", "W7b")
	require.Equal(t, exitOK, status, stderr)
	assert.Contains(t, stdout, "timer-heap: scheduler currentthread, timer heap, ")
	assert.Regexp(t, `(?m)^ID +NAME +UNIT +WEFT +TIMER-HEAP +GO +RATIO +TARGET +MET$`, stdout)
	assert.Regexp(t, `(?m)^W1 +spawn_local +ns/task +\S+ \[\S+–\S+\] +- +\S+ \[`, stdout, "W1 does not use a timer")
	assert.Regexp(t, `(?m)^W7b +timers_churn +ns/op +\S+ \[\S+–\S+\] +[0-9.]+ +\S+ \[`, stdout)
	assert.Regexp(t, `(?m)^W7b timers_churn: run 1/1: weft \S+ timer-heap \S+ go \S+ ns/op$`, stderr)

	status, stdout, stderr = weft("bench", "--config", path, "--runs", "1", tiny, "W1")
	require.Equal(t, exitOK, status, stderr)
	assert.NotContains(t, stdout, "timer-heap", "no column that no selected workload runs on")
}
