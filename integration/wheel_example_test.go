package integration_test

import (
	"fmt"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/runtime/rt"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/timers/wheel"
)

// A timeout on a runtime with the wheel and a virtual clock: the runtime
// has nothing to do but wait, so the clock jumps straight to the deadline
// and the example finishes at once.
func Example_wheelTimeout() {
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
