//go:build linux

package integration_test

import (
	"fmt"
	"testing"

	"github.com/weftrt/weft/conformance"
	_ "github.com/weftrt/weft/drivers/iouring"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/percore"
)

// TestPercoreRunsTheDriverSuiteOnIOUring runs the driver suite with drivers/iouring,
// a ring per worker: an operation runs on the ring of the worker that
// polls it, whichever driver owns its handle, so with two workers most
// handles have operations in both rings.
func TestPercoreRunsTheDriverSuiteOnIOUring(t *testing.T) {
	skipWithoutIOUring(t)
	for _, n := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.Driver(t, func(b *rt.Builder) {
				b.Scheduler(percore.Name).Workers(n).Driver("iouring").Timer("wheel").Set("driver.fallback", "error")
			})
		})
	}
}
