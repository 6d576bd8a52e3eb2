//go:build linux

package percore

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// allowedCPUs returns the CPUs the process may run on, in increasing order.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("percore: reading the CPU affinity: %w", err)
	}
	var cpus []int
	for cpu := 0; cpu < maxCPU; cpu++ {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	return cpus, nil
}

// pinThread restricts the calling OS thread to cpu. The caller has locked
// its goroutine to the thread and never unlocks it, so when the goroutine
// exits, Go ends the thread rather than reuse it with this affinity.
func pinThread(cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	// Pid 0 is the calling thread.
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("percore: pinning a worker to CPU %d: %w", cpu, err)
	}
	return nil
}
