//go:build !race

package runq_test

// raceEnabled scales stress tests down under the race detector.
const raceEnabled = false
