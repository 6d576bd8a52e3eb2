package weft_test

import (
	"fmt"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

// The README's example: spawn a task from the root task and await it.
func Example() {
	r, err := weft.NewBuilder().IgnoreEnv().Scheduler("currentthread").Build()
	if err != nil {
		panic(err)
	}
	defer r.Close()

	var h *core.JoinHandle[int]
	sum, err := weft.BlockOn(r, core.PollFunc[int](func(cx *core.Context) (int, bool) {
		if h == nil {
			h = weft.Spawn(cx, core.PollFunc[int](func(*core.Context) (int, bool) { return 41, true }))
		}
		res, ok := h.Poll(cx)
		return res.Value + 1, ok
	}))
	fmt.Println(sum, err)
	// Output: 42 <nil>
}

// Run builds the default runtime, runs a future to completion and closes
// the runtime.
func ExampleRun() {
	v, err := weft.Run(future.Map(future.Ready(20), func(x int) int { return x + 1 }))
	fmt.Println(v, err)
	// Output: 21 <nil>
}
