package tasks_test

import (
	"fmt"
	"sort"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/tasks"
)

// A JoinSet owns a group of tasks and gives their results back as they
// finish; dropping the set aborts what is left.
func ExampleJoinSet_inACoroutineBody() {
	_ = weft.Run(func(c *weft.Ctx) error {
		js := tasks.NewJoinSet[int]()
		defer js.Drop()
		for i := 1; i <= 4; i++ {
			js.Spawn(c, co.Future(func(c *co.Ctx) int { return i * 10 }))
		}
		var got []int
		for {
			r := weft.Await(c, js.JoinNext())
			if r.Empty {
				break
			}
			if r.Err != nil {
				return r.Err
			}
			got = append(got, r.Value)
		}
		sort.Ints(got)
		fmt.Println(got)
		return nil
	})
	// Output: [10 20 30 40]
}

// A CancellationToken tells tasks to stop; each waits on its token (or a
// child of it) and cleans up when it is cancelled.
func ExampleCancellationToken_inACoroutineBody() {
	_ = weft.Run(func(c *weft.Ctx) error {
		token := tasks.NewCancellationToken()
		worker := weft.Go(c, func(c *weft.Ctx) string {
			weft.Await(c, token.Child().Cancelled())
			return "worker stopped"
		})
		token.Cancel()
		fmt.Println(weft.Await(c, worker).Value)
		return nil
	})
	// Output: worker stopped
}
