package bench_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/weftrt/weft/tools/bench"
)

func TestSummarizeTakesTheMiddleFigureOfAnOddCount(t *testing.T) {
	s := bench.Summarize([]float64{9, 1, 5, 7, 3})
	assert.Equal(t, 5.0, s.Median)
	assert.Equal(t, 1.0, s.Min)
	assert.Equal(t, 9.0, s.Max)
}

func TestSummarizeAveragesTheMiddleTwoOfAnEvenCount(t *testing.T) {
	s := bench.Summarize([]float64{10, 2, 4, 8})
	assert.Equal(t, 6.0, s.Median)
	assert.Equal(t, 2.0, s.Min)
	assert.Equal(t, 10.0, s.Max)
}

func TestSummarizeOfOneFigureIsThatFigure(t *testing.T) {
	assert.Equal(t, bench.Stats{Median: 3, Min: 3, Max: 3, Runs: []float64{3}}, bench.Summarize([]float64{3}))
}

func TestSummarizeKeepsTheRunsInRunOrderAndLeavesItsInputAlone(t *testing.T) {
	in := []float64{3, 1, 2}
	s := bench.Summarize(in)
	assert.Equal(t, []float64{3, 1, 2}, s.Runs)
	assert.Equal(t, []float64{3, 1, 2}, in)
}

func TestSummarizeOfNoFiguresIsZero(t *testing.T) {
	assert.Equal(t, bench.Stats{}, bench.Summarize(nil))
}

func TestRatioIsGoOverWeftForTimes(t *testing.T) {
	// weft takes 50 ns where Go takes 200: weft is 4x better.
	assert.Equal(t, 4.0, bench.Ratio(bench.LowerIsBetter, 50, 200))
	assert.Equal(t, 0.25, bench.Ratio(bench.LowerIsBetter, 200, 50))
}

func TestRatioIsWeftOverGoForThroughputs(t *testing.T) {
	// weft does 300 operations/s where Go does 100: weft is 3x better.
	assert.Equal(t, 3.0, bench.Ratio(bench.HigherIsBetter, 300, 100))
	assert.Equal(t, 0.5, bench.Ratio(bench.HigherIsBetter, 50, 100))
}

func TestRatioWithAZeroDenominatorIsNotFinite(t *testing.T) {
	assert.True(t, math.IsInf(bench.Ratio(bench.LowerIsBetter, 0, 10), 1))
	assert.True(t, math.IsNaN(bench.Ratio(bench.HigherIsBetter, 0, 0)))
}

func TestScaledSizesKeepAtLeastOne(t *testing.T) {
	assert.Equal(t, 200_000, bench.Scaled(200_000, 1))
	assert.Equal(t, 200, bench.Scaled(200_000, 0.001))
	assert.Equal(t, 1, bench.Scaled(1_000, 0.0001))
}

func TestFormatFigureKeepsThreeSignificantDigitsBelowAHundred(t *testing.T) {
	assert.Equal(t, "1234", bench.FormatFigure(1234.4))
	assert.Equal(t, "123", bench.FormatFigure(123.4))
	assert.Equal(t, "12.3", bench.FormatFigure(12.34))
	assert.Equal(t, "1.23", bench.FormatFigure(1.234))
}
