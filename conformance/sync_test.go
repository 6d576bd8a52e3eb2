package conformance_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/runtime/rt"
)

// TestSyncSuiteOnTheMiniScheduler runs the sync suite on the minimal
// scheduler of this package's tests, so the suite is checked where it
// lives; the scheduler modules run it on themselves.
func TestSyncSuiteOnTheMiniScheduler(t *testing.T) {
	conformance.Sync(t, func(b *rt.Builder) { b.SchedulerFactory(newMini(false)) })
}

func TestSyncSuiteHasItsBehavioursNamed(t *testing.T) {
	names := conformance.SyncBehaviours()
	assert.GreaterOrEqual(t, len(names), 25)
	seen := map[string]bool{}
	for _, n := range names {
		assert.False(t, seen[n], "duplicate behaviour %s", n)
		seen[n] = true
	}
}
