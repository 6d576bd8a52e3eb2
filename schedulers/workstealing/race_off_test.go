//go:build !race

package workstealing

// raceEnabled scales stress tests down under the race detector.
const raceEnabled = false
