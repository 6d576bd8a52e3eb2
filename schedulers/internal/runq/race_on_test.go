//go:build race

package runq_test

// raceEnabled scales stress tests down under the race detector, which
// slows every atomic operation by an order of magnitude; the interleavings
// they check are the same.
const raceEnabled = true
