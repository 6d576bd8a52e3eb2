package core

import (
	"time"

	"github.com/weftrt/weft/core/internal/bridge"
)

// init hands the scheduler-only operations to package core/spi (see
// package bridge for why they travel this way).
func init() {
	bridge.TaskRun = func(t *Task, cx *Context) bool { return t.run(cx) }
	bridge.TaskBind = func(t *Task, s Scheduler) { t.bind(s) }
	bridge.TaskShutdown = func(t *Task) { t.shutdown() }
	bridge.TaskReject = func(t *Task, cause error) { t.reject(cause) }

	bridge.NewWorkerContext = newWorkerContext
	bridge.ResetBudget = func(cx *Context) { cx.resetBudget() }

	bridge.TimeParking = func(t *Time, max time.Duration) time.Duration { return t.parking(max) }
	bridge.TimeUnparked = func(t *Time) { t.unparked() }
	bridge.TimeSetUnpark = func(t *Time, f func()) { t.setUnpark(f) }
	bridge.TimeParkTimeout = func(t *Time, max time.Duration) time.Duration { return t.parkTimeout(max) }
	bridge.TimeFire = func(t *Time) int { return t.fire() }
	bridge.TimeCanAutoAdvance = func(t *Time) bool { return t.canAutoAdvance() }
	bridge.TimeAutoAdvance = func(t *Time) bool { return t.autoAdvance() }

	bridge.EntryExpire = func(e *TimerEntry) Waker { return e.expire() }
	bridge.EntryResetFired = func(e *TimerEntry) { e.resetFired() }
}
