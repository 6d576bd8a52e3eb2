//go:build !linux

package percore

import "errors"

var errNoPinning = errors.New("percore: pinning workers to CPUs needs Linux (sched_setaffinity)")

// allowedCPUs is not available off Linux.
func allowedCPUs() ([]int, error) { return nil, errNoPinning }

// pinThread is not available off Linux.
func pinThread(int) error { return errNoPinning }
