package workstealing_test

import (
	"fmt"
	"testing"

	"github.com/weftrt/weft/conformance"
)

// TestTasksConformance runs the semantic suite of the task utilities
// (lib/tasks) and coroutine tasks (lib/co) on 1, 2 and 4 workers; with
// 4 workers (more than the machine's cores) its races and stress
// behaviour run under real parallelism and preemption.
func TestTasksConformance(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.Tasks(t, workStealing(n))
		})
	}
}
