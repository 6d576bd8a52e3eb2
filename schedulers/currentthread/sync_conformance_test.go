package currentthread_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/runtime/rt"
)

func currentThread(b *rt.Builder) { b.Scheduler("currentthread") }

// TestSyncConformance runs the semantic suite of lib/wsync and its
// channels on currentthread.
func TestSyncConformance(t *testing.T) { conformance.Sync(t, currentThread) }

// BenchmarkW4PingPong is workload W4 on currentthread: ns per round trip
// through two bounded(1) channels. Compare BenchmarkW4GoPingPong.
func BenchmarkW4PingPong(b *testing.B) { conformance.ChannelPingPong(b, currentThread) }

// BenchmarkW4GoPingPong is W4 on plain Go: goroutines and make(chan int, 1).
func BenchmarkW4GoPingPong(b *testing.B) { conformance.GoChannelPingPong(b) }

// BenchmarkW6FanIn is workload W6 on currentthread: ns per message, four
// producers into one bounded(1024) channel. Compare BenchmarkW6GoFanIn.
func BenchmarkW6FanIn(b *testing.B) { conformance.ChannelFanIn(b, currentThread) }

// BenchmarkW6GoFanIn is W6 on plain Go: goroutines and make(chan int, 1024).
func BenchmarkW6GoFanIn(b *testing.B) { conformance.GoChannelFanIn(b) }
