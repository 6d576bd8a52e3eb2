package bench

import (
	"math"
	"slices"
)

// Better says which way a unit improves.
type Better int

const (
	// LowerIsBetter is for times: ns per operation, wall time.
	LowerIsBetter Better = iota
	// HigherIsBetter is for throughputs: operations per second, GB/s.
	HigherIsBetter
)

// Stats summarises one subject's figures over the runs of a workload.
type Stats struct {
	Median, Min, Max float64
	// Runs holds the figure of each run, in run order.
	Runs []float64
}

// Summarize returns the median, minimum and maximum of figures. The median
// of an even number of figures is the mean of the middle two. Summarize of
// no figures is the zero Stats.
func Summarize(figures []float64) Stats {
	if len(figures) == 0 {
		return Stats{}
	}
	sorted := slices.Clone(figures)
	slices.Sort(sorted)
	n := len(sorted)
	median := sorted[n/2]
	if n%2 == 0 {
		median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	return Stats{Median: median, Min: sorted[0], Max: sorted[n-1], Runs: slices.Clone(figures)}
}

// Ratio compares a weft figure with the plain-Go figure of the same
// workload so that higher is always better: goFigure/weft for times,
// weft/goFigure for throughputs. A zero denominator gives +Inf (or NaN when
// both are zero); callers report such a ratio as unknown.
func Ratio(better Better, weft, goFigure float64) float64 {
	num, den := goFigure, weft
	if better == HigherIsBetter {
		num, den = weft, goFigure
	}
	if den == 0 {
		if num == 0 {
			return math.NaN()
		}
		return math.Inf(1)
	}
	return num / den
}
