package heap_test

import (
	"fmt"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/timers/heap"
)

// The heap used directly through the Timer SPI, on a virtual clock: it keeps
// full clock precision, so an entry due at 1.5 ms fires at 1.5 ms.
func Example() {
	clock := core.NewVirtualClock()
	h := heap.New(clock, 1, heap.DefaultArity)

	for _, d := range []time.Duration{3 * time.Millisecond, 1500 * time.Microsecond} {
		e := &core.TimerEntry{Deadline: core.Instant(d)}
		e.Waker.Register(core.WakerFunc(func() {
			fmt.Println("woken at", time.Duration(clock.Now()))
		}))
		h.Insert(e)
	}
	for h.Len() > 0 {
		next, _ := h.NextDeadline()
		clock.AdvanceTo(next)
		h.Fire(clock.Now())
	}
	// Output:
	// woken at 1.5ms
	// woken at 3ms
}
