// Package bridge carries core's scheduler-only operations to package
// core/spi without exporting them from core, where every user would see
// them.
//
// core cannot export a function to spi alone, and spi cannot be imported
// by core (spi is built on core's types). So core stores each operation
// here from its init, as a func value of core's types held in an any,
// and spi, which imports core and so initialises after it, turns each into
// a typed function once. The variables are written before any package
// that imports spi initialises, and only read afterwards.
package bridge

// The operations core hands to spi. The comment on each is the dynamic
// type core stores; spi's init asserts it.
var (
	TaskRun      any // func(*core.Task, *core.Context) bool
	TaskBind     any // func(*core.Task, core.Scheduler)
	TaskShutdown any // func(*core.Task)
	TaskReject   any // func(*core.Task, error)

	NewWorkerContext any // func(core.Worker) *core.Context
	ResetBudget      any // func(*core.Context)

	TimeParking        any // func(*core.Time, time.Duration) time.Duration
	TimeUnparked       any // func(*core.Time)
	TimeSetUnpark      any // func(*core.Time, func())
	TimeParkTimeout    any // func(*core.Time, time.Duration) time.Duration
	TimeFire           any // func(*core.Time) int
	TimeCanAutoAdvance any // func(*core.Time) bool
	TimeAutoAdvance    any // func(*core.Time) bool

	EntryExpire     any // func(*core.TimerEntry) core.Waker
	EntryResetFired any // func(*core.TimerEntry)
)

// Links are the fields a timer keeps in each entry it holds: list links
// for a wheel, an index for a heap, and the timer that holds it. E is
// core.TimerEntry. core.TimerEntry holds its Links as its first field,
// so spi reaches them without a call.
type Links[E any] struct {
	Prev, Next *E
	Index      int
	Slot       int32
	Owner      any
}
