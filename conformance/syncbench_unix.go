//go:build unix

package conformance

import (
	"syscall"
	"time"
)

// syncCPUTime returns the CPU time (user and system) the process has used,
// all threads together, or false where it cannot be read.
func syncCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
