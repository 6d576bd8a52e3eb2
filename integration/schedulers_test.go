package integration_test

import (
	"github.com/weftrt/weft/runtime/rt"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/wheel"
)

// The two layouts every driver's suite runs on, with the wheel: one
// worker that owns the driver, and two workers sharing it (operations run
// on one while the other is parked in the driver, the layout that exposes
// races between Park and the operations). driver selects and configures
// the driver.

func onCurrentThread(driver func(*rt.Builder)) func(*rt.Builder) {
	return func(b *rt.Builder) { driver(b.Scheduler("currentthread").Timer("wheel")) }
}

func onWorkStealing(driver func(*rt.Builder)) func(*rt.Builder) {
	return func(b *rt.Builder) { driver(b.Scheduler("workstealing").Workers(2).Timer("wheel")) }
}
