package bench_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/tools/bench"
)

// sampleReport is a report with two weft columns and one measured (W1),
// one skipped (W9) and one failed (W7a) result, with made-up figures.
func sampleReport(t *testing.T) *bench.Report {
	t.Helper()
	ws, err := bench.Lookup("W1", "W9", "W7a")
	require.NoError(t, err)
	skipped := *ws[2]
	skipped.Pending = "not written yet (a pending workload, for the test)"
	measured := bench.Result{
		Workload: ws[0], N: 200_000,
		Weft:  []bench.Stats{bench.Summarize([]float64{100, 90, 120}), bench.Summarize([]float64{200, 210, 190})},
		Go:    bench.Summarize([]float64{300, 320, 280}),
		Ratio: 3, Ratios: []float64{3, 1.5},
	}
	return &bench.Report{
		Machine: bench.Machine{CPU: "Test CPU", Cores: 2, GOMAXPROCS: 2, Go: "go1.26", OS: "linux", Arch: "amd64", LoadStart: "0.5 0.4 0.3"},
		Date:    time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Command: "weft bench --runs 3",
		Runs:    3,
		Compositions: []bench.Composition{
			{Name: "weft", Comp: load(t, map[string]any{"scheduler.kind": "alias"}, alias(t))},
			{Name: "currentthread", Comp: currentThread(t)},
		},
		Results: []bench.Result{
			measured,
			{Workload: &skipped, N: 1, Skipped: skipped.Pending},
			{Workload: ws[1], N: 100_000, Ideal: 100, Err: errors.New("W7a timers_sleep run 1 on weft: boom")},
		},
	}
}

func TestWriteJSONWritesTheMachineTheConfigAndOneEntryPerResult(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport(t).WriteJSON(&b))
	var doc struct {
		Machine map[string]any            `json:"machine"`
		Date    string                    `json:"date"`
		Command string                    `json:"command"`
		Runs    int                       `json:"runs"`
		Config  map[string]any            `json:"config"`
		Compare map[string]map[string]any `json:"compare"`
		Results []map[string]any          `json:"results"`
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&doc), b.String())

	assert.Equal(t, "Test CPU", doc.Machine["cpu"])
	assert.Equal(t, 2.0, doc.Machine["cores"])
	assert.Equal(t, 2.0, doc.Machine["gomaxprocs"])
	assert.Equal(t, "go1.26", doc.Machine["go"])
	assert.Equal(t, "2025-01-02T03:04:05Z", doc.Date)
	assert.Equal(t, "weft bench --runs 3", doc.Command)
	assert.Equal(t, 3, doc.Runs)
	assert.Equal(t, "alias", doc.Config["scheduler.kind"])
	assert.Equal(t, "wheel", doc.Config["timer.kind"])
	assert.Equal(t, "10s", doc.Config["runtime.shutdown_timeout"], "durations as in a file")
	assert.Equal(t, 1024.0, doc.Config["runtime.event_buffer"], "numbers as numbers")
	assert.Equal(t, "currentthread", doc.Compare["currentthread"]["scheduler.kind"])
	assert.NotContains(t, doc.Compare["currentthread"], "timer.kind", "only the scheduler differs")

	require.Len(t, doc.Results, 3)
	w1 := doc.Results[0]
	for key, want := range map[string]any{
		"id": "W1", "name": "spawn_local", "unit": "ns/task", "better": "lower", "size": 200_000.0,
		"weft": 100.0, "weft_min": 90.0, "weft_max": 120.0,
		"go": 300.0, "go_min": 280.0, "go_max": 320.0, "ratio": 3.0,
		"currentthread": 200.0, "currentthread_min": 190.0, "currentthread_max": 210.0, "currentthread_ratio": 1.5,
		"target": ">= 2.0x", "met": true,
		"weft_runs": []any{100.0, 90.0, 120.0}, "go_runs": []any{300.0, 320.0, 280.0},
	} {
		assert.Equal(t, want, w1[key], key)
	}
	assert.Equal(t, map[string]any{"id": "W9", "name": "tcp_stream", "unit": "GB/s", "better": "higher",
		"size": 1.0, "target": ">= 1.0x", "skipped": sampleReport(t).Results[1].Skipped}, doc.Results[1])
	assert.Equal(t, "W7a timers_sleep run 1 on weft: boom", doc.Results[2]["error"])
	assert.Equal(t, 100.0, doc.Results[2]["ideal"])
	assert.NotContains(t, doc.Results[2], "weft")
}

func TestWriteJSONWritesAnInfiniteRatioAsNull(t *testing.T) {
	rep := sampleReport(t)
	rep.Results[0].Ratio = bench.Ratio(bench.LowerIsBetter, 0, 1)
	var b bytes.Buffer
	require.NoError(t, rep.WriteJSON(&b))
	var doc struct{ Results []map[string]any }
	require.NoError(t, json.Unmarshal(b.Bytes(), &doc))
	assert.Contains(t, doc.Results[0], "ratio")
	assert.Nil(t, doc.Results[0]["ratio"])
}

func TestWriteTableHasAColumnPerSubjectAndARowPerResult(t *testing.T) {
	var b bytes.Buffer
	require.NoError(t, sampleReport(t).WriteTable(&b))
	out := b.String()
	assert.Contains(t, out, "Test CPU, 2 cores, GOMAXPROCS 2, go1.26 linux/amd64, load 0.5 0.4 0.3\n")
	assert.Contains(t, out, "weft: scheduler alias, timer wheel, driver epoll, clock real\n")
	assert.Contains(t, out, "currentthread: scheduler currentthread, timer wheel, driver epoll, clock real\n")
	assert.Regexp(t, `(?m)^ID +NAME +UNIT +WEFT +CURRENTTHREAD +GO +RATIO +TARGET +MET$`, out)
	assert.Regexp(t, `(?m)^W1 +spawn_local +ns/task +100 \[90\.0–120\] +200 +300 \[280–320\] +3\.00x +>= 2\.0x +yes$`, out)
	assert.Regexp(t, `(?m)^W9 +tcp_stream +GB/s +- +- +- +- +>= 1\.0x +skipped: not written yet`, out)
	assert.Regexp(t, `(?m)^W7a +timers_sleep +ms +- +- +- +- +<= 150 ms \(1\.5x ideal\) +failed: W7a timers_sleep run 1 on weft: boom$`, out)
	assert.False(t, strings.Contains(out, "scaled"), "a full-size run says nothing of scale")
}

func TestWriteTableSaysWhenSizesWereScaled(t *testing.T) {
	rep := sampleReport(t)
	rep.Scale = 0.01
	var b bytes.Buffer
	require.NoError(t, rep.WriteTable(&b))
	assert.Contains(t, b.String(), "sizes scaled by 0.01: not the specification's figures\n")
}

func TestWriteTableRoundsTheRatioDownSoThatAPrintedTargetIsAMetOne(t *testing.T) {
	rep := sampleReport(t)
	rep.Results = rep.Results[:1]
	rep.Results[0].Ratio = 1.999
	var b bytes.Buffer
	require.NoError(t, rep.WriteTable(&b))
	assert.Regexp(t, `(?m)^W1 .* 1\.99x +>= 2\.0x +no$`, b.String())
}
