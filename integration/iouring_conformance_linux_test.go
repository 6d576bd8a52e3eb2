//go:build linux

package integration_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	_ "github.com/weftrt/weft/drivers/iouring"
	"github.com/weftrt/weft/runtime/rt"
)

// iouringDriver selects io_uring with no fallback: a kernel without it
// fails the suite rather than testing epoll.
func iouringDriver(b *rt.Builder) { b.Driver("iouring").Set("driver.fallback", "error") }

func TestIOUringPassesTheDriverSuiteOnACurrentThreadRuntime(t *testing.T) {
	conformance.Driver(t, onCurrentThread(iouringDriver))
}

// Two workers share the driver: operations are submitted on one worker
// while the other is blocked in io_uring_enter, the layout that exercises
// the submitters' flush and Unpark's NOP.
func TestIOUringPassesTheDriverSuiteOnAWorkStealingRuntime(t *testing.T) {
	conformance.Driver(t, onWorkStealing(iouringDriver))
}

// The same with a kernel thread polling the submission queue.
func TestIOUringPassesTheDriverSuiteWithSQPoll(t *testing.T) {
	conformance.Driver(t, onWorkStealing(func(b *rt.Builder) {
		iouringDriver(b.Set("driver.sqpoll", true).Set("driver.sqpoll_idle", "10ms"))
	}))
}
