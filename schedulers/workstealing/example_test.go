package workstealing_test

import (
	"fmt"
	"os"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// A runtime on four workers, chosen by name like any scheduler module.
func Example() {
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("workstealing").Workers(4).Build()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()

	// The root spawns ten tasks (they go to its worker's LIFO slot and run
	// queue, and other workers steal them) and sums their results.
	var hs []*core.JoinHandle[int]
	sum := 0
	v, err := rt.BlockOn(r, core.Future[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
		if hs == nil {
			for i := 1; i <= 10; i++ {
				hs = append(hs, core.Spawn(cx, core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) {
					return i * i, true
				}))))
			}
		}
		for len(hs) > 0 {
			res, ok := hs[0].Poll(cx)
			if !ok {
				return 0, false
			}
			sum += res.Value
			hs = hs[1:]
		}
		return sum, true
	})))
	fmt.Println(v, err, len(r.Metrics()))
	// Output: 385 <nil> 4
}

// A task that must make a blocking call hands its worker's other tasks
// to a new goroutine first.
func ExampleBlockInPlace() {
	r, _ := rt.NewBuilder().IgnoreEnv().Scheduler("workstealing").Workers(1).Build()
	defer r.Close()
	n, _ := rt.BlockOn(r, core.Future[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
		var info os.FileInfo
		workstealing.BlockInPlace(cx, func() {
			info, _ = os.Stat(os.TempDir()) // a blocking system call
		})
		if info == nil {
			return 0, true
		}
		return 1, true
	})))
	fmt.Println(n)
	// Output: 1
}
