package currentthread_test

import (
	"testing"

	"github.com/weftrt/weft/core/conformance"
)

// TestTasksConformance runs the semantic suite of the task utilities
// (core/tasks) and coroutine tasks (core/co) on currentthread.
func TestTasksConformance(t *testing.T) { conformance.Tasks(t, currentThread) }
