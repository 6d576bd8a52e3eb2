//go:build !unix

package conformance

import "time"

// syncCPUTime cannot read the process's CPU time on this platform.
func syncCPUTime() (time.Duration, bool) { return 0, false }
