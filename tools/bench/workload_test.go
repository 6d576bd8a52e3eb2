package bench_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/tools/bench"
)

func ids(ws []*bench.Workload) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}

func TestLookupOfNothingSelectsEveryWorkloadInTableOrder(t *testing.T) {
	ws, err := bench.Lookup()
	require.NoError(t, err)
	assert.Equal(t, []string{"W1", "W2", "W3", "W4", "W5", "W6", "W7a", "W7b", "W8", "W8cpu", "W9", "W10", "W11", "W11rel", "W12a", "W12b", "W12c"}, ids(ws))
}

func TestLookupAcceptsIDsAndNamesInAnyCaseOnceEachInTableOrder(t *testing.T) {
	ws, err := bench.Lookup("w7B", "spawn_local", "W1", "YIELD_MANY")
	require.NoError(t, err)
	assert.Equal(t, []string{"W1", "W3", "W7b"}, ids(ws))
}

func TestLookupRejectsAnUnknownIDListingTheValidOnes(t *testing.T) {
	_, err := bench.Lookup("W1", "W7")
	require.Error(t, err)
	assert.Equal(t, `unknown workload "W7" (valid: W1, W2, W3, W4, W5, W6, W7a, W7b, W8, W8cpu, W9, W10, W11, W11rel, W12a, W12b, W12c)`, err.Error())
}

func TestEveryWorkloadThatCanRunHasBothSidesAndEveryOtherSaysWhy(t *testing.T) {
	for _, w := range bench.Workloads {
		if w.Pending != "" {
			assert.Nil(t, w.Weft, w.ID)
			assert.Nil(t, w.WeftProcess, w.ID)
			continue
		}
		assert.True(t, (w.Weft == nil) != (w.WeftProcess == nil), "%s: exactly one of Weft and WeftProcess", w.ID)
		assert.NotNil(t, w.Go, w.ID)
		assert.Positive(t, w.Size, w.ID)
		if w.ID != "W8" && w.ID != "W11rel" { // their targets are on W8cpu and W11
			assert.NotEqual(t, bench.NoTarget, w.Target.Kind, w.ID)
		}
	}
}

func TestAMinimumRatioIsMetFromTheRatioUp(t *testing.T) {
	w := &bench.Workload{ID: "X", Target: bench.Target{Kind: bench.MinRatio, Value: 2}}
	for ratio, met := range map[float64]bool{1.99: false, 2: true, 7: true} {
		r := &bench.Result{Workload: w, Weft: []bench.Stats{{Median: 1}}, Ratio: ratio}
		assert.Equal(t, met, r.Met(), "ratio %v", ratio)
	}
}

func TestAnIdealTargetComparesWeftsMedianWithAMultipleOfTheIdeal(t *testing.T) {
	w := &bench.Workload{ID: "X", Target: bench.Target{Kind: bench.MaxOfIdeal, Value: 1.5}}
	for median, met := range map[float64]bool{100: true, 150: true, 151: false} {
		// The ratio to Go plays no part.
		r := &bench.Result{Workload: w, Ideal: 100, Weft: []bench.Stats{{Median: median}}, Ratio: 100}
		assert.Equal(t, met, r.Met(), "median %v", median)
	}
	assert.Equal(t, "<= 150 ms (1.5x ideal)", w.Target.String(100, "ms"))
}

func TestASkippedResultMeetsNoTarget(t *testing.T) {
	w := &bench.Workload{ID: "X", Target: bench.Target{Kind: bench.MinRatio, Value: 1}}
	r := &bench.Result{Workload: w, Skipped: "not written yet", Ratio: 5}
	assert.False(t, r.Met())
}
