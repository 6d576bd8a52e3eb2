package conformance_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/runtime/rt"
)

// TestMiniSchedulerRunsTheTasksSuite runs the task-utility and coroutine
// suite on the kit's own minimal scheduler.
func TestMiniSchedulerRunsTheTasksSuite(t *testing.T) {
	conformance.Tasks(t, func(b *rt.Builder) { b.SchedulerFactory(newMini(false)) })
}
