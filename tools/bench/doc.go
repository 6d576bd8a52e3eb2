// Package bench runs the workloads of weft's BENCHMARKS.md on weft runtimes
// and on plain Go (goroutines, channels, runtime timers) in the same
// process, and reports both with their ratio. The weft command's bench
// subcommand is a thin layer over it.
//
// # Subjects
//
// A workload runs on every composition it is given (the configured one,
// and currentthread for comparison when the configured scheduler is
// something else) and on plain Go. The weft side uses only the public API:
// tasks are spawned with core.Spawn from a task or from a runtime handle,
// yields go through core.Yield, messages through lib/wsync/mpsc, sleeps
// through lib/timing, and the last task tells the waiting root task it is
// done by waking it (a counter and a core.AtomicWaker), never by a busy
// loop.
//
// # Runs
//
// Each run of a workload builds a fresh runtime, measures, and closes it,
// so runs are independent; building and closing are outside the timed
// region, everything the workload names is inside it. A warm-up run of
// each subject, whose figures are discarded, grows the heap and warms the
// caches first. The runs of the subjects are then interleaved,
//
//	warm-up: weft, currentthread, go    run 1: weft, currentthread, go    ...
//
// so that a burst of load from other processes on a shared machine falls
// on all of them alike rather than on one column. A garbage collection
// precedes every measurement, so one subject does not pay for the garbage
// of another.
//
// # Figures
//
// Each run yields one figure in the workload's unit (ns per task, ms of
// wall time, ...). A subject's figures over the runs are summarised by
// their median, minimum and maximum ([Summarize]). The ratio compares the
// medians so that higher is always better: plain Go over weft for times,
// weft over plain Go for throughputs ([Ratio]). Targets are those of
// BENCHMARKS.md: a minimum ratio to plain Go, or, for W7a, a maximum
// multiple of the ideal wall time.
//
// # Adding a workload
//
// A workload is one entry of [Workloads]: its ID, name, unit, size and
// target, and two functions that run it once at a given size, on a runtime
// and on plain Go, and return the figure. Entries whose code does not
// exist yet carry the reason in Pending and are reported as skipped.
package bench
