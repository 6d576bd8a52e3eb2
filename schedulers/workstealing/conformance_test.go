package workstealing_test

import (
	"fmt"
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// factory builds a scheduler with n workers and otherwise default
// settings.
func factory(n int, tweak ...func(*workstealing.Config)) conformance.SchedulerFactory {
	return func(p core.SchedulerParams) (core.Scheduler, error) {
		cfg := workstealing.DefaultConfig()
		cfg.Workers = n
		for _, f := range tweak {
			f(&cfg)
		}
		return workstealing.New(cfg, p)
	}
}

func TestConformance(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.Scheduler(t, factory(n))
		})
	}
}

// TestConformanceWithoutTheLIFOSlot runs the suite with the LIFO slot
// off and a fixed global queue interval, the other code paths of the
// worker loop.
func TestConformanceWithoutTheLIFOSlot(t *testing.T) {
	conformance.Scheduler(t, factory(2, func(c *workstealing.Config) {
		c.LIFOSlot = false
		c.GlobalQueueInterval = 7
	}))
}
