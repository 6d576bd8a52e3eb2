package bench

import (
	"fmt"
	"strings"

	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
)

// Workload is one row of BENCHMARKS.md.
type Workload struct {
	ID   string // "W1"
	Name string // "spawn_local"
	Unit string // what one figure is: "ns/task", "ms"
	// Better says whether a lower or a higher figure is better; it sets
	// the direction of the ratio.
	Better Better
	// Size is the workload's size as the specification gives it (tasks,
	// operations, ...). A scaled run uses a fraction of it.
	Size int
	// Target is the figure BENCHMARKS.md asks for.
	Target Target
	// Ideal, when set, is the best possible figure at size n (W7a: the
	// longest sleep); targets relative to the ideal use it.
	Ideal func(n int) float64
	// NeedsTimer is set for workloads that sleep: they need a runtime with
	// a timer and a real clock.
	NeedsTimer bool
	// NeedsDriver is set for workloads that do I/O through weft: every
	// composition they run on needs a driver.
	NeedsDriver bool
	// TargetDriver, when set, restricts the target to runs whose first
	// composition uses that driver (W10's target is for io_uring); on
	// another driver the row is reported without a verdict.
	TargetDriver string
	// Pending, when not empty, says why the workload cannot run yet; it is
	// reported as skipped.
	Pending string

	// Weft runs the workload once at size n on r and returns the figure.
	// r is fresh and is closed by the caller.
	Weft func(r *rt.Runtime, n int) (float64, error)
	// WeftProcess, set instead of Weft, runs the workload once at size n
	// on a runtime of comp that it builds itself, typically in a child
	// process (the echo server of W8 and W9, whose CPU time is read from
	// its own accounting).
	WeftProcess func(comp *config.Composition, n int) (float64, error)
	// Go runs the plain-Go counterpart once at size n and returns the
	// figure.
	Go func(n int) (float64, error)
}

// TargetKind is what a target constrains.
type TargetKind int

const (
	// NoTarget: the workload is reported without a target.
	NoTarget TargetKind = iota
	// MinRatio: the ratio to plain Go must be at least Value.
	MinRatio
	// MaxOfIdeal: weft's median must be at most Value times the ideal
	// figure (Workload.Ideal).
	MaxOfIdeal
)

// Target is a workload's goal from BENCHMARKS.md.
type Target struct {
	Kind  TargetKind
	Value float64
}

// Met reports whether a result meets the target, and false when there is
// no target or the result has no figures.
func (t Target) Met(r *Result) bool {
	if !r.Measured() {
		return false
	}
	switch t.Kind {
	case MinRatio:
		return r.Ratio >= t.Value
	case MaxOfIdeal:
		return r.Ideal > 0 && r.Weft[0].Median <= t.Value*r.Ideal
	}
	return false
}

// String describes the target for the table of a result of ideal figure
// ideal in unit: ">= 2.0x" or "<= 150 ms (1.5x ideal)".
func (t Target) String(ideal float64, unit string) string {
	switch t.Kind {
	case MinRatio:
		if v := t.Value * 10; v == float64(int(v)) {
			return fmt.Sprintf(">= %.1fx", t.Value)
		}
		return fmt.Sprintf(">= %.2fx", t.Value)
	case MaxOfIdeal:
		return fmt.Sprintf("<= %s %s (%.1fx ideal)", FormatFigure(t.Value*ideal), unit, t.Value)
	}
	return ""
}

// Workloads lists every workload of BENCHMARKS.md in table order. Those
// not written yet carry Pending.
var Workloads = []*Workload{
	{
		ID: "W1", Name: "spawn_local", Unit: "ns/task", Size: 200_000,
		Target: Target{MinRatio, 2.0},
		Weft:   weftSpawnLocal, Go: goSpawnLocal,
	},
	{
		ID: "W2", Name: "spawn_remote", Unit: "ns/task", Size: 200_000,
		Target: Target{MinRatio, 2.0},
		Weft:   weftSpawnRemote, Go: goSpawnRemote,
	},
	{
		ID: "W3", Name: "yield_many", Unit: "ns/yield", Size: yieldsPerTask,
		Target: Target{MinRatio, 2.0},
		Weft:   weftYieldMany, Go: goYieldMany,
	},
	{
		ID: "W4", Name: "ping_pong", Unit: "ns/round trip", Size: 100_000,
		Target: Target{MinRatio, 1.5},
		Weft:   weftPingPong, Go: goPingPong,
	},
	{
		ID: "W5", Name: "chained_spawn", Unit: "ns/spawn", Size: 100_000,
		Target: Target{MinRatio, 2.0},
		Weft:   weftChainedSpawn, Go: goChainedSpawn,
	},
	{
		ID: "W6", Name: "mpsc_fan_in", Unit: "ns/message", Size: 1_000_000,
		Target: Target{MinRatio, 1.0},
		Weft:   weftFanIn, Go: goFanIn,
	},
	{
		ID: "W7a", Name: "timers_sleep", Unit: "ms", Size: timerSleepers,
		Target: Target{MaxOfIdeal, 1.5}, Ideal: timersSleepIdeal, NeedsTimer: true,
		Weft: weftTimersSleep, Go: goTimersSleep,
	},
	{
		ID: "W7b", Name: "timers_churn", Unit: "ns/op", Size: 1_000_000,
		Target: Target{MinRatio, 3.0}, NeedsTimer: true,
		Weft: weftTimersChurn, Go: goTimersChurn,
	},
	{
		ID: "W8", Name: "tcp_echo_rr", Unit: "round trips/s", Better: HigherIsBetter,
		Size: echoConns * 2_000, NeedsDriver: true,
		WeftProcess: weftEchoRate, Go: goEchoRate,
	},
	{
		// The same run as W8, for its server's CPU time. <= 0.65x plain
		// Go's CPU per round trip: go/weft >= 1/0.65.
		ID: "W8cpu", Name: "tcp_echo_rr_server_cpu", Unit: "ns CPU/round trip",
		Size: echoConns * 2_000, NeedsDriver: true,
		Target:      Target{MinRatio, 1 / 0.65},
		WeftProcess: weftEchoCPU, Go: goEchoCPU,
	},
	{
		ID: "W9", Name: "tcp_stream", Unit: "GB/s", Better: HigherIsBetter,
		Size: 64 << 20, NeedsDriver: true,
		Target:      Target{MinRatio, 1.0},
		WeftProcess: weftStream, Go: goStream,
	},
	{
		ID: "W10", Name: "file_random_read", Unit: "reads/s", Better: HigherIsBetter,
		Size: 200_000, NeedsDriver: true,
		Target: Target{MinRatio, 1.5}, TargetDriver: "iouring",
		Weft: weftFileReads, Go: goFileReads,
	},
	{
		// <= 0.25x the bytes of a parked goroutine: go/weft >= 4.
		ID: "W11", Name: "idle_tasks", Unit: "bytes/task", Size: 1_000_000,
		Target: Target{MinRatio, 4.0},
		Weft:   weftIdleBytes, Go: goIdleBytes,
	},
	{
		// The same run as W11, for the time to release every task.
		ID: "W11rel", Name: "idle_tasks_release", Unit: "ns/task", Size: 1_000_000,
		Weft: weftIdleRelease, Go: goIdleRelease,
	},
	{
		ID: "W12a", Name: "coroutine_spawn", Unit: "ns/task", Size: 200_000,
		Target: Target{MinRatio, 1.0},
		Weft:   weftCoroutineSpawn, Go: goCoroutineSpawn,
	},
	{
		ID: "W12b", Name: "coroutine_ping_pong", Unit: "ns/round trip", Size: 100_000,
		Target: Target{MinRatio, 1.0},
		Weft:   weftCoroutinePingPong, Go: goCoroutinePingPong,
	},
	{
		ID: "W12c", Name: "coroutine_fan_in_select", Unit: "ns/message", Size: 1_000_000,
		Target: Target{MinRatio, 1.0},
		Weft:   weftFanInSelect, Go: goFanInSelect,
	},
}

// Lookup returns the workloads named by ids (IDs or names, in any case),
// in table order and each once; no ids selects them all. An unknown ID is
// an error that lists the valid ones.
func Lookup(ids ...string) ([]*Workload, error) {
	if len(ids) == 0 {
		return Workloads, nil
	}
	want := map[*Workload]bool{}
	for _, id := range ids {
		w := find(id)
		if w == nil {
			return nil, fmt.Errorf("unknown workload %q (valid: %s)", id, strings.Join(IDs(), ", "))
		}
		want[w] = true
	}
	var out []*Workload
	for _, w := range Workloads {
		if want[w] {
			out = append(out, w)
		}
	}
	return out, nil
}

// IDs returns the ID of every workload, in table order.
func IDs() []string {
	ids := make([]string, len(Workloads))
	for i, w := range Workloads {
		ids[i] = w.ID
	}
	return ids
}

func find(id string) *Workload {
	for _, w := range Workloads {
		if strings.EqualFold(w.ID, id) || strings.EqualFold(w.Name, id) {
			return w
		}
	}
	return nil
}
