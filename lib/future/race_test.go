//go:build race

package future_test

const raceEnabled = true
