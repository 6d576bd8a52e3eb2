package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/weftrt/weft/core/config"
	"github.com/weftrt/weft/tools/bench"
)

var benchCommand = &command{
	name:    "bench",
	summary: "run the benchmark workloads on the configured runtime and on plain Go",
	usage: `usage: weft bench [--config FILE] [--json FILE] [--runs N] [ID ...]

Bench runs the workloads of BENCHMARKS.md (all of them, or those whose IDs
or names are given) on the runtime the configuration describes (defaults,
then FILE, then WEFT_ environment variables), on the currentthread
scheduler when the configured scheduler is another one, and on plain Go
(goroutines, channels, runtime timers), all in the same process. Each
workload runs N times on each, interleaved, every run on a fresh runtime.
Progress goes to standard error; one table goes to standard output: each
figure's median [min–max], the ratio to plain Go (higher is better), the
target and whether it is met. Workloads that cannot run (not written yet,
or no timer in the composition) are listed as skipped.

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
	comps := []bench.Composition{{Name: "weft", Comp: comp}}
	if comp.Scheduler.Name != compareScheduler {
		ct, err := bench.WithScheduler(comp, compareScheduler)
		if err != nil {
			fmt.Fprintf(stderr, "weft bench: %v\n", err)
			return exitProblem
		}
		comps = append(comps, bench.Composition{Name: compareScheduler, Comp: ct})
	}

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
