package workstealing_test

import (
	"fmt"
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/workstealing"
)

func workStealing(n int) func(*rt.Builder) {
	return func(b *rt.Builder) { b.Scheduler(workstealing.Name).Workers(n) }
}

// TestSyncConformance runs the semantic suite of lib/wsync and its
// channels on 1, 2 and 4 workers.
func TestSyncConformance(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.Sync(t, workStealing(n))
		})
	}
}

// BenchmarkPingPong is workload W4 (ping_pong) on 2 workers: ns per round
// trip through two bounded(1) channels. Compare BenchmarkGoPingPong.
func BenchmarkPingPong(b *testing.B) { conformance.ChannelPingPong(b, workStealing(benchWorkers)) }

// BenchmarkGoPingPong is W4 in plain Go: goroutines and make(chan int, 1).
func BenchmarkGoPingPong(b *testing.B) { conformance.GoChannelPingPong(b) }

// BenchmarkFanIn is workload W6 (mpsc_fan_in) on 2 workers: ns per
// message, four producers into one bounded(1024) channel. Compare
// BenchmarkGoFanIn.
func BenchmarkFanIn(b *testing.B) { conformance.ChannelFanIn(b, workStealing(benchWorkers)) }

// BenchmarkGoFanIn is W6 in plain Go: goroutines and make(chan int, 1024).
func BenchmarkGoFanIn(b *testing.B) { conformance.GoChannelFanIn(b) }
