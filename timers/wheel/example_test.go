package wheel_test

import (
	"fmt"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/rt"
	"github.com/weftrt/weft/core/timing"
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

// A timeout on a runtime with the wheel and a virtual clock: the runtime
// has nothing to do but wait, so the clock jumps straight to the deadline
// and the example finishes at once.
func Example_timeout() {
	r, err := rt.NewBuilder().IgnoreEnv().
		Scheduler("currentthread").Timer("wheel").Clock("virtual").
		Build()
	if err != nil {
		panic(err)
	}
	defer r.Close()

	never := core.PollFunc[string](func(*core.Context) (string, bool) { return "", false })
	res, err := rt.BlockOn(r, core.Future[core.Result[string]](timing.Timeout[string](never, 30*time.Second)))
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Err)
	fmt.Println("virtual time passed:", time.Duration(r.Time().Clock.Now()))
	// Output:
	// weft: deadline elapsed
	// virtual time passed: 30s
}
