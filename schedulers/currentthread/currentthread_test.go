package currentthread_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/currentthread"
)

func factory(p core.SchedulerParams) (core.Scheduler, error) {
	return currentthread.New(currentthread.DefaultConfig(), p)
}

func TestConformance(t *testing.T) {
	conformance.Scheduler(t, factory)
}
