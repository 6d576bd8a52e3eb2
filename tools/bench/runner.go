package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
)

// Composition is one weft column of the results: a configuration under a
// short name ("weft" for the configured one, "currentthread").
type Composition struct {
	Name string
	Comp *config.Composition
	// Applies, when not nil, limits the composition to the workloads it
	// returns true for; on the others its column is empty. It is how a
	// column that differs in the timer (or the driver) only is shown for
	// the workloads that exercise it.
	Applies func(*Workload) bool
}

// AppliesTo reports whether the composition runs w.
func (c *Composition) AppliesTo(w *Workload) bool { return c.Applies == nil || c.Applies(w) }

// WithScheduler returns comp with its scheduler replaced by kind in that
// module's default configuration; the runtime, driver, timer and clock
// sections stay as they are. It is how the currentthread column is derived
// from the configured composition: the configured scheduler's keys (such as
// scheduler.workers) would not be valid for another scheduler.
func WithScheduler(comp *config.Composition, kind string) (*config.Composition, error) {
	return WithSetting(comp, core.KindScheduler, "scheduler.kind", kind)
}

// WithSetting returns comp with the section of key's kind replaced by a
// fresh load of that one key ("timer.kind" = "heap", say), in the module's
// default configuration; the other sections stay as they are.
func WithSetting(comp *config.Composition, kind core.Kind, key string, value any) (*config.Composition, error) {
	return WithSection(comp, kind, map[string]any{key: value})
}

// WithSection returns comp with the section of kind replaced by a fresh
// load of overrides (keys of that section: "driver.kind", "driver.path",
// ...) over the module's defaults; the other sections stay as they are.
func WithSection(comp *config.Composition, kind core.Kind, overrides map[string]any) (*config.Composition, error) {
	fresh, err := config.LoadWith(config.LoadOptions{Overrides: overrides})
	if err != nil {
		return nil, err
	}
	c := *comp
	switch kind {
	case core.KindScheduler:
		c.Scheduler = fresh.Scheduler
	case core.KindTimer:
		c.Timer = fresh.Timer
	case core.KindDriver:
		c.Driver = fresh.Driver
	case core.KindClock:
		c.Clock = fresh.Clock
	default:
		return nil, fmt.Errorf("no section of kind %q", kind)
	}
	return &c, nil
}

// Options configure a Run.
type Options struct {
	// Compositions are the weft columns; the first is the one the ratio
	// and the target concern. At least one.
	Compositions []Composition
	// Runs is the number of runs of each workload on each subject; at
	// least 1.
	Runs int
	// Scale multiplies every workload's size (at least 1 after scaling);
	// 0 means 1. Tests use a small scale; figures at another scale than 1
	// are not those of the specification.
	Scale float64
	// Progress, if not nil, receives a line per run of each workload.
	Progress io.Writer
	// RunTimeout bounds one weft run: a run still going after it has its
	// runtime shut down, and its workload fails. 0 means
	// DefaultRunTimeout.
	RunTimeout time.Duration
}

// DefaultRunTimeout bounds one weft run. The slowest workload at full size
// takes well under a second; a run that takes minutes is a hang.
const DefaultRunTimeout = 2 * time.Minute

// Result is what Run found for one workload.
type Result struct {
	Workload *Workload
	// N is the size the workload ran at (its Size, scaled).
	N int
	// Ideal is the ideal figure at size N, or 0 when the workload has
	// none.
	Ideal float64
	// Skipped, when not empty, says why the workload did not run.
	Skipped string
	// Err is why a run failed; the figures are then incomplete.
	Err error
	// Weft holds the figures on each composition, in the order of
	// Options.Compositions; Go holds plain Go's.
	Weft []Stats
	Go   Stats
	// Ratio compares the medians of the first composition and plain Go
	// (see [Ratio]); Ratios does so for each composition.
	Ratio  float64
	Ratios []float64
	// TargetElsewhere is set when the workload's target is for another
	// driver than the first composition's (see Workload.TargetDriver): the
	// result then has no verdict.
	TargetElsewhere bool
}

// Measured reports whether the workload ran on every subject without
// failing.
func (r *Result) Measured() bool { return r.Skipped == "" && r.Err == nil && len(r.Weft) > 0 }

// Met reports whether the result meets its workload's target.
func (r *Result) Met() bool { return !r.TargetElsewhere && r.Workload.Target.Met(r) }

// Run runs each workload opts.Runs times on every composition and on plain
// Go, interleaving the subjects run by run, after one warm-up run of each
// whose figures are discarded, and returns one Result per workload. A workload that fails on a run stops there with Err set; the
// others still run. Run itself fails only when a composition cannot be
// built at all.
func Run(opts Options, workloads []*Workload) ([]Result, error) {
	if len(opts.Compositions) == 0 {
		return nil, errors.New("no composition to run")
	}
	if opts.Runs < 1 {
		return nil, fmt.Errorf("runs must be >= 1, got %d", opts.Runs)
	}
	if opts.Scale == 0 {
		opts.Scale = 1
	}
	if opts.RunTimeout == 0 {
		opts.RunTimeout = DefaultRunTimeout
	}
	for _, c := range opts.Compositions {
		r, err := rt.New(c.Comp)
		if err != nil {
			return nil, fmt.Errorf("building the %s runtime: %w", c.Name, err)
		}
		if err := r.Close(); err != nil {
			return nil, fmt.Errorf("closing the %s runtime: %w", c.Name, err)
		}
	}
	results := make([]Result, len(workloads))
	for i, w := range workloads {
		results[i] = runWorkload(&opts, w)
	}
	return results, nil
}

// Scaled returns size scaled by scale, at least 1.
func Scaled(size int, scale float64) int {
	return max(1, int(math.Round(float64(size)*scale)))
}

func runWorkload(opts *Options, w *Workload) Result {
	res := Result{Workload: w, N: Scaled(w.Size, opts.Scale)}
	res.TargetElsewhere = w.TargetDriver != "" && opts.Compositions[0].Comp.Driver.Name != w.TargetDriver
	if w.Ideal != nil {
		res.Ideal = w.Ideal(res.N)
	}
	if res.Skipped = skipReason(opts, w); res.Skipped != "" {
		progressf(opts, "%s %s: skipped: %s\n", w.ID, w.Name, res.Skipped)
		return res
	}
	weft := make([][]float64, len(opts.Compositions))
	var plain []float64
	// Run 0 is the warm-up.
	for run := 0; run <= opts.Runs; run++ {
		label, progress := "warm-up", "warm-up"
		if run > 0 {
			label, progress = fmt.Sprintf("run %d", run), fmt.Sprintf("run %d/%d", run, opts.Runs)
		}
		progressf(opts, "%s %s: %s:", w.ID, w.Name, progress)
		for i, c := range opts.Compositions {
			if !c.AppliesTo(w) {
				continue
			}
			v, err := runWeft(opts, w, c.Comp, res.N)
			if err != nil {
				progressf(opts, " %s failed\n", c.Name)
				res.Err = fmt.Errorf("%s %s %s on %s: %w", w.ID, w.Name, label, c.Name, err)
				return res
			}
			if run > 0 {
				weft[i] = append(weft[i], v)
			}
			progressf(opts, " %s %s", c.Name, FormatFigure(v))
		}
		runtime.GC()
		v, err := w.Go(res.N)
		if err != nil {
			progressf(opts, " go failed\n")
			res.Err = fmt.Errorf("%s %s %s on plain Go: %w", w.ID, w.Name, label, err)
			return res
		}
		if run > 0 {
			plain = append(plain, v)
		}
		progressf(opts, " go %s %s\n", FormatFigure(v), w.Unit)
	}
	res.Go = Summarize(plain)
	for i := range weft {
		s := Summarize(weft[i])
		res.Weft = append(res.Weft, s)
		ratio := math.NaN()
		if len(s.Runs) > 0 {
			ratio = Ratio(w.Better, s.Median, res.Go.Median)
		}
		res.Ratios = append(res.Ratios, ratio)
	}
	res.Ratio = res.Ratios[0]
	return res
}

// skipReason says why w cannot run on the compositions, or "".
func skipReason(opts *Options, w *Workload) string {
	if w.Pending != "" {
		return w.Pending
	}
	if !opts.Compositions[0].AppliesTo(w) {
		return fmt.Sprintf("the %s composition does not run it", opts.Compositions[0].Name)
	}
	for _, c := range opts.Compositions {
		if !c.AppliesTo(w) {
			continue
		}
		if w.NeedsDriver && c.Comp.Driver.Name == config.None {
			return fmt.Sprintf("the %s composition has no driver (driver.kind: none)", c.Name)
		}
		if !w.NeedsTimer {
			continue
		}
		if c.Comp.Timer.Name == config.None {
			return fmt.Sprintf("the %s composition has no timer (timer.kind: none)", c.Name)
		}
		if c.Comp.Clock.Name != "real" {
			return fmt.Sprintf("the %s composition's clock is %q; timer workloads measure real time", c.Name, c.Comp.Clock.Name)
		}
	}
	return ""
}

// runWeft runs w once at size n on a fresh runtime of comp. A run still
// going after the run timeout has its runtime shut down, which makes its
// BlockOn return.
func runWeft(opts *Options, w *Workload, comp *config.Composition, n int) (float64, error) {
	if w.WeftProcess != nil {
		runtime.GC()
		return w.WeftProcess(comp, n)
	}
	r, err := rt.New(comp)
	if err != nil {
		return 0, err
	}
	runtime.GC()
	watchdog := time.AfterFunc(opts.RunTimeout, r.ShutdownBackground)
	v, err := w.Weft(r, n)
	if !watchdog.Stop() {
		err = fmt.Errorf("did not finish within %v; its runtime was shut down", opts.RunTimeout)
	}
	if cerr := r.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return v, err
}

func progressf(opts *Options, format string, args ...any) {
	if opts.Progress != nil {
		fmt.Fprintf(opts.Progress, format, args...)
	}
}
