package main

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/tools/bench"
)

var benchCommand = &command{
	name:    "bench",
	summary: "run the benchmark workloads on the configured runtime and on plain Go",
	usage: `usage: weft bench [--config FILE] [--json FILE] [--runs N] [ID ...]

Bench runs the workloads of BENCHMARKS.md (all of them, or those whose IDs
or names are given) on the runtime the configuration describes (defaults,
then FILE, then WEFT_ environment variables), on the currentthread
scheduler when the configured scheduler is another one, with the other
timer module on the timer workloads (W7a, W7b), and on plain Go
(goroutines, channels, runtime timers, package net and os), all in the
same run. The echo workloads (W8, W9) run their server in a child process
(this executable) so its CPU time is its own. Each workload runs N times
on each, interleaved, every run on a fresh runtime.
Progress goes to standard error; one table goes to standard output: each
figure's median [min–max], the ratio to plain Go (higher is better), the
target and whether it is met. Workloads that cannot run (not written yet,
or no timer or driver in the composition) are listed as skipped.

Flags:
  --config FILE   configuration file (YAML, TOML or JSON)
  --json FILE     also write the results as JSON to FILE
  --runs N        runs of each workload on each subject (default 5)

It exits 1 if the runtime cannot be built, a workload fails or FILE cannot
be written, and 2 on a usage error such as an unknown workload ID.
`,
}

func init() { benchCommand.run = runBench }

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(benchCommand, stderr)
	fs.Usage = func() { fmt.Fprint(stderr, benchCommand.usage) }
	path := fs.String("config", "", "")
	jsonPath := fs.String("json", "", "")
	runs := fs.Int("runs", 5, "")
	// Undocumented: scale every workload's size (tests and quick checks).
	scale := fs.Float64("scale", 1, "")
	ids, status, ok := parseInterspersed(fs, args)
	if !ok {
		return status
	}
	if *runs < 1 {
		fmt.Fprintf(stderr, "weft bench: --runs must be >= 1, got %d\n", *runs)
		return exitUsage
	}
	if !(*scale > 0) {
		fmt.Fprintf(stderr, "weft bench: --scale must be > 0, got %g\n", *scale)
		return exitUsage
	}
	workloads, err := bench.Lookup(ids...)
	if err != nil {
		fmt.Fprintf(stderr, "weft bench: %v\n", err)
		return exitUsage
	}

	comp, err := config.LoadWith(config.LoadOptions{Path: *path, Environ: environ()})
	if err != nil {
		for _, p := range flatten(err) {
			fmt.Fprintln(stderr, p)
		}
		return exitProblem
	}
	comps, err := benchColumns(comp, workloads)
	if err != nil {
		fmt.Fprintf(stderr, "weft bench: %v\n", err)
		return exitProblem
	}
	defer bench.RemoveScratch()

	rep := &bench.Report{
		Machine:      bench.ProbeMachine(),
		Date:         time.Now(),
		Command:      strings.Join(append([]string{"weft", "bench"}, args...), " "),
		Runs:         *runs,
		Scale:        *scale,
		Compositions: comps,
	}
	rep.Results, err = bench.Run(bench.Options{
		Compositions: comps,
		Runs:         *runs,
		Scale:        *scale,
		Progress:     stderr,
	}, workloads)
	if err != nil {
		fmt.Fprintf(stderr, "weft bench: %v\n", err)
		return exitProblem
	}
	rep.Machine.LoadEnd = bench.LoadAverage()

	status = exitOK
	for _, r := range rep.Results {
		if r.Err != nil {
			fmt.Fprintf(stderr, "weft bench: %v\n", r.Err)
			status = exitProblem
		}
	}
	fmt.Fprintln(stdout)
	if err := rep.WriteTable(stdout); err != nil {
		fmt.Fprintf(stderr, "weft bench: %v\n", err)
		return exitProblem
	}
	if *jsonPath != "" {
		if err := writeJSON(rep, *jsonPath); err != nil {
			fmt.Fprintf(stderr, "weft bench: %v\n", err)
			return exitProblem
		}
	}
	return status
}

// compareScheduler is the scheduler every configured composition is
// compared with.
const compareScheduler = "currentthread"

// timerColumns are the timer modules compared on the timer workloads: the
// configured one, and each other one here beside it.
var timerColumns = []string{"wheel", "heap"}

// ioColumns returns, for the I/O workloads (W8 to W10), the configured
// composition on the io_uring driver and the percore scheduler on io_uring,
// unless the configuration already is that. A column whose runtime cannot
// be built here (io_uring refused by the kernel, say) is left out: its
// driver does not fall back to epoll, so a column named iouring measures
// io_uring.
func ioColumns(comp *config.Composition) []bench.Composition {
	if comp.Driver.Name == config.None {
		return nil
	}
	isIO := func(w *bench.Workload) bool { return w.NeedsDriver }
	uring := map[string]any{"driver.kind": "iouring", "driver.fallback": "error"}
	var out []bench.Composition
	if comp.Driver.Name != "iouring" {
		if c, err := bench.WithSection(comp, core.KindDriver, uring); err == nil && buildable(c) {
			out = append(out, bench.Composition{Name: "iouring", Comp: c, Applies: isIO})
		}
	}
	if comp.Driver.Name != "iouring" || comp.Scheduler.Name != "percore" {
		c, err := bench.WithSection(comp, core.KindDriver, uring)
		if err == nil {
			c, err = bench.WithScheduler(c, "percore")
		}
		if err == nil && buildable(c) {
			out = append(out, bench.Composition{Name: "percore-iouring", Comp: c, Applies: isIO})
		}
	}
	return out
}

// buildable reports whether a runtime of comp can be built here.
func buildable(comp *config.Composition) bool {
	r, err := rt.New(comp)
	if err != nil {
		return false
	}
	r.Close()
	return true
}

// pluginColumn returns the column of the configured driver served out of
// process (this executable as its own plugin binary, through
// `weft plugins serve-driver`), for the echo round-trip workloads, or nil
// when the configured driver is none or already a plugin.
func pluginColumn(comp *config.Composition) (*bench.Composition, error) {
	driver := comp.Driver.Name
	if driver == config.None || driver == plugins.ModuleName {
		return nil, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	sum, err := fileSHA256(exe)
	if err != nil {
		return nil, err
	}
	c, err := bench.WithSection(comp, core.KindDriver, map[string]any{
		"driver.kind":   plugins.ModuleName,
		"driver.path":   exe,
		"driver.sha256": sum,
		"driver.args":   []string{"plugins", "serve-driver", driver},
		"driver.name":   driver + "-plugin",
	})
	if err != nil {
		return nil, fmt.Errorf("the %s driver as a plugin: %w", driver, err)
	}
	return &bench.Composition{
		Name: driver + "-plugin", Comp: c,
		Applies: func(w *bench.Workload) bool { return w.ID == "W8" || w.ID == "W8cpu" },
	}, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// benchColumns returns the weft columns of the table for the configured
// composition: the composition itself; the same on the currentthread
// scheduler when another one is configured (every workload); and the same
// with each other timer module (the workloads that use a timer). A column
// that none of workloads runs on is left out.
func benchColumns(comp *config.Composition, workloads []*bench.Workload) ([]bench.Composition, error) {
	comps := []bench.Composition{{Name: "weft", Comp: comp}}
	if comp.Scheduler.Name != compareScheduler {
		ct, err := bench.WithScheduler(comp, compareScheduler)
		if err != nil {
			return nil, err
		}
		comps = append(comps, bench.Composition{Name: compareScheduler, Comp: ct})
	}
	if comp.Timer.Name != config.None {
		for _, timer := range timerColumns {
			if timer == comp.Timer.Name {
				continue
			}
			if _, err := core.Lookup(core.KindTimer, timer); err != nil {
				continue
			}
			c, err := bench.WithSetting(comp, core.KindTimer, "timer.kind", timer)
			if err != nil {
				return nil, err
			}
			comps = append(comps, bench.Composition{
				Name: "timer-" + timer, Comp: c,
				Applies: func(w *bench.Workload) bool { return w.NeedsTimer },
			})
		}
	}
	comps = append(comps, ioColumns(comp)...)
	if c, err := pluginColumn(comp); err != nil {
		return nil, err
	} else if c != nil {
		comps = append(comps, *c)
	}
	used := comps[:1]
	for _, c := range comps[1:] {
		if slices.ContainsFunc(workloads, c.AppliesTo) {
			used = append(used, c)
		}
	}
	return used, nil
}

// parseInterspersed parses args into fs, allowing flags after workload IDs
// ("weft bench W1 --runs 1"), and returns the IDs. Its status and ok are
// those of parseFlags.
func parseInterspersed(fs *flag.FlagSet, args []string) (ids []string, status int, ok bool) {
	for {
		if status, ok := parseFlags(fs, args); !ok {
			return nil, status, false
		}
		if fs.NArg() == 0 {
			return ids, exitOK, true
		}
		if n := len(args) - fs.NArg(); n > 0 && args[n-1] == "--" {
			return append(ids, fs.Args()...), exitOK, true
		}
		ids = append(ids, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func writeJSON(rep *bench.Report, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := rep.WriteJSON(f); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}
