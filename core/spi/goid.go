package spi

import "runtime"

// GoroutineID returns the calling goroutine's id, parsed from the header of
// its stack trace ("goroutine 123 [running]:"). It costs about a
// microsecond, so schedulers call it only when a worker goroutine starts or
// takes the core, and in Shutdown, never per task: Shutdown uses it to tell
// whether it runs on one of the scheduler's own goroutines (inside a task),
// which it must not wait for.
func GoroutineID() uint64 {
	var buf [64]byte
	n := runtime.Stack(buf[:], false)
	const prefix = len("goroutine ")
	var id uint64
	for i := prefix; i < n; i++ {
		c := buf[i]
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
