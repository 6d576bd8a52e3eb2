package percore_test

import (
	"fmt"
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/percore"
)

// factory builds a scheduler with n workers and otherwise default settings.
func factory(n int, tweak ...func(*percore.Config)) conformance.SchedulerFactory {
	return func(p core.SchedulerParams) (core.Scheduler, error) {
		cfg := percore.DefaultConfig()
		cfg.Workers = n
		for _, f := range tweak {
			f(&cfg)
		}
		return percore.New(cfg, p)
	}
}

func TestConformance(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.Scheduler(t, factory(n))
		})
	}
}

// TestConformanceWithShortIntervals runs the suite with the global queue
// and the maintenance looked at every few ticks, the other paths of the
// worker loop.
func TestConformanceWithShortIntervals(t *testing.T) {
	conformance.Scheduler(t, factory(2, func(c *percore.Config) {
		c.GlobalQueueInterval = 2
		c.EventInterval = 3
	}))
}

// TestConformanceWithLockedThreads runs the suite with every worker locked
// to its OS thread. (The sync and driver suites write task bodies as
// iter.Pull coroutines, which Go forbids on locked threads; see the
// package documentation.)
func TestConformanceWithLockedThreads(t *testing.T) {
	conformance.Scheduler(t, factory(2, func(c *percore.Config) { c.LockThreads = true }))
}

func perCore(n int) func(*rt.Builder) {
	return func(b *rt.Builder) { b.Scheduler(percore.Name).Workers(n) }
}

// TestSyncConformance runs the semantic suite of lib/wsync and its channels.
// The suites that need a driver or a timer run in the integration module.
func TestSyncConformance(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.Sync(t, perCore(n))
		})
	}
}
