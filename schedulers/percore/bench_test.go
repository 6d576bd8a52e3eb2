package percore_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
)

// The benchmarks follow the workloads of BENCHMARKS.md (W1, W2, W3, W5)
// and a spawn-and-join variant on the percore scheduler (no driver: the scheduler's own costs), each beside its plain-Go counterpart
// (the "weft" and "go" sub-benchmarks of conformance's scheduler
// workloads), so that one `go test -bench .` run shows both. Every op is
// one whole workload; the figure to compare is the ns/task, ns/yield or
// ns/spawn metric. The weft runtime uses 2 workers, the development
// machines' GOMAXPROCS.
//
//	go test -run '^$' -bench . -count 5

const benchWorkers = 2

// BenchmarkSpawnLocal is W1 spawn_local: ns/task.
func BenchmarkSpawnLocal(b *testing.B) { conformance.BenchSpawnLocal(b, perCore(benchWorkers)) }

// BenchmarkSpawnRemote is W2 spawn_remote: ns/task.
func BenchmarkSpawnRemote(b *testing.B) { conformance.BenchSpawnRemote(b, perCore(benchWorkers)) }

// BenchmarkYieldMany is W3 yield_many: ns/yield.
func BenchmarkYieldMany(b *testing.B) { conformance.BenchYieldMany(b, perCore(benchWorkers)) }

// BenchmarkChainedSpawn is W5 chained_spawn: ns/spawn.
func BenchmarkChainedSpawn(b *testing.B) { conformance.BenchChainedSpawn(b, perCore(benchWorkers)) }

// BenchmarkSpawnJoin spawns tasks and awaits each one's JoinHandle: ns/task.
func BenchmarkSpawnJoin(b *testing.B) { conformance.BenchSpawnJoin(b, perCore(benchWorkers)) }

// BenchmarkPingPong is W4 ping_pong on 2 workers: ns per round trip
// through two bounded(1) channels. Compare BenchmarkGoPingPong.
func BenchmarkPingPong(b *testing.B) { conformance.ChannelPingPong(b, perCore(benchWorkers)) }

// BenchmarkGoPingPong is W4 in plain Go: goroutines and make(chan int, 1).
func BenchmarkGoPingPong(b *testing.B) { conformance.GoChannelPingPong(b) }
