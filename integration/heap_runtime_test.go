package integration_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/runtime/rt"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/timers/heap"
)

func TestTheHeapPassesTheTimingSuiteOnACurrentThreadRuntime(t *testing.T) {
	conformance.TimingRuntime(t, func(b *rt.Builder) { b.Timer("heap").Scheduler("currentthread") })
}
