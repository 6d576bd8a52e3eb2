//go:build !race

package currentthread_test

// stressTasks is the number of tasks the stress test spawns.
const stressTasks = 1_000_000
