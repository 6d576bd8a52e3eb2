//go:build darwin || freebsd || netbsd || openbsd

package integration_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	_ "github.com/weftrt/weft/drivers/kqueue"
	"github.com/weftrt/weft/runtime/rt"
)

// The driver conformance suite against the real kqueue. CI cross-compiles
// these tests (drivers/kqueue/crossbuild.sh) but has no BSD or macOS
// machine to run them on; run them there with go test.

func kqueueDriver(b *rt.Builder) { b.Driver("kqueue") }

func TestKqueuePassesTheDriverSuiteOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, onCurrentThread(kqueueDriver))
}

func TestKqueuePassesTheDriverSuiteOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, onWorkStealing(kqueueDriver))
}
