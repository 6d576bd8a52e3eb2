package runq_test

import (
	"slices"
	"testing"

	"github.com/weftrt/weft/core"
)

// same fails the test unless got holds exactly want's tasks, in order.
func same(t *testing.T, what string, want, got []*core.Task) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !slices.Equal(want, got) {
		t.Fatalf("%s: got %d tasks, want %d, or not in the same order", what, len(got), len(want))
	}
}
