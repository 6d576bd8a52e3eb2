package wheel_test

import (
	"testing"

	"github.com/weftrt/weft/core/conformance"
	"github.com/weftrt/weft/core/rt"
	_ "github.com/weftrt/weft/schedulers/currentthread"
)

func TestTimingAPIOnACurrentThreadRuntime(t *testing.T) {
	conformance.TimingRuntime(t, func(b *rt.Builder) { b.Timer("wheel").Scheduler("currentthread") })
}

// Linked without the weft facade, the wheel is still the default timer:
// the default is declared where the module registers.
func TestWithoutTheFacadeTheBuilderDefaultsToTheWheel(t *testing.T) {
	comp, err := rt.NewBuilder().IgnoreEnv().Composition()
	if err != nil {
		t.Fatal(err)
	}
	if comp.Timer.Name != "wheel" || comp.Scheduler.Name != "currentthread" {
		t.Fatalf("default timer %q and scheduler %q, want wheel and currentthread (the only ones linked)",
			comp.Timer.Name, comp.Scheduler.Name)
	}
}
