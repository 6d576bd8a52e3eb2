//go:build !race

package percore_test

const raceEnabled = false
