package wheel_test

import (
	"fmt"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/timers/wheel"
)

// The wheel used directly through the Timer SPI, on a virtual clock: a
// deadline of 1.5 ms rounds up to the 2 ms tick, and NextDeadline says when
// to fire.
func Example() {
	clock := core.NewVirtualClock()
	w := wheel.New(clock, 1)

	e := &core.TimerEntry{Deadline: core.Instant(1500 * time.Microsecond)}
	e.Waker.Register(core.WakerFunc(func() {
		fmt.Println("woken at", time.Duration(clock.Now()))
	}))
	w.Insert(e)

	next, _ := w.NextDeadline()
	fmt.Println("next deadline", time.Duration(next))
	clock.AdvanceTo(next)
	fmt.Println("fired", w.Fire(clock.Now()))
	// Output:
	// next deadline 2ms
	// woken at 2ms
	// fired 1
}
