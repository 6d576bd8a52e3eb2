//go:build linux

package iouring

import (
	"strings"
	"testing"
)

func TestProbeReportsTheOperationsTheDriverNeeds(t *testing.T) {
	rep, err := Probe()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", rep)
	if !rep.Available() {
		t.Fatalf("io_uring unavailable on this kernel: %v", rep.Err)
	}
	for _, code := range requiredOps {
		if !rep.Supports(opName(code)) {
			t.Errorf("the report says %s is unsupported", opName(code))
		}
	}
	s := rep.String()
	for _, want := range []string{"kernel ", "io_uring: available", "features: ", "SINGLE_MMAP", "operations supported", "ASYNC_CANCEL"} {
		if !strings.Contains(s, want) {
			t.Errorf("the report lacks %q:\n%s", want, s)
		}
	}
}
