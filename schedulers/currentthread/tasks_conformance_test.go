package currentthread_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
)

// TestTasksConformance runs the semantic suite of the task utilities
// (lib/tasks) and coroutine tasks (lib/co) on currentthread.
func TestTasksConformance(t *testing.T) { conformance.Tasks(t, currentThread) }
