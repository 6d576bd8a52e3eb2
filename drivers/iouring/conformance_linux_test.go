//go:build linux

package iouring_test

import (
	"testing"

	"github.com/weftrt/weft/core/conformance"
	"github.com/weftrt/weft/core/rt"
	_ "github.com/weftrt/weft/drivers/iouring"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/wheel"
)

func TestConformanceOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("currentthread").Driver("iouring").Timer("wheel").Set("driver.fallback", "error")
	})
}

// Two workers share the driver: operations are submitted on one worker
// while the other is blocked in io_uring_enter, the layout that exercises
// the submitters' flush and Unpark's NOP.
func TestConformanceOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("workstealing").Workers(2).Driver("iouring").Timer("wheel").Set("driver.fallback", "error")
	})
}

// The same with a kernel thread polling the submission queue.
func TestConformanceWithSQPoll(t *testing.T) {
	conformance.Driver(t, func(b *rt.Builder) {
		b.Scheduler("workstealing").Workers(2).Driver("iouring").Timer("wheel").
			Set("driver.fallback", "error").Set("driver.sqpoll", true).Set("driver.sqpoll_idle", "10ms")
	})
}
