//go:build linux

package epoll_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
)

// The driver suite itself runs against epoll in the integration module,
// which links the schedulers and the timer a runtime needs.

func TestTheDriverSuiteChecksAtLeastTwentyBehaviours(t *testing.T) {
	if n := len(conformance.DriverBehaviours()); n < 20 {
		t.Fatalf("the driver suite has %d behaviours, want at least 20", n)
	}
}
