package future_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

// countdown is ready with its label after it was polled n times, waking
// itself each time it is not ready (a stand-in for real asynchronous work).
func countdown(label string, n int) core.Future[string] {
	return future.FromFunc(func(cx *core.Context) (string, bool) {
		if n--; n > 0 {
			cx.Waker().Wake()
			return "", false
		}
		return label, true
	})
}

func ExampleWait() {
	fmt.Println(future.Wait(countdown("done", 3)))
	// Output: done
}

func ExampleFromFunc() {
	polls := 0
	f := future.FromFunc(func(cx *core.Context) (int, bool) {
		polls++
		if polls < 3 {
			cx.Waker().Wake() // ask to be polled again
			return 0, false
		}
		return polls, true
	})
	fmt.Println("ready after", future.Wait(f), "polls")
	// Output: ready after 3 polls
}

func ExampleLazy() {
	f := future.Lazy(func() string {
		fmt.Println("computing")
		return "value"
	})
	fmt.Println("created")
	fmt.Println(future.Wait(f))
	// Output:
	// created
	// computing
	// value
}

func ExampleMap() {
	f := future.Map(countdown("weft", 2), strings.ToUpper)
	fmt.Println(future.Wait(f))
	// Output: WEFT
}

func ExampleThen() {
	lookup := func(user string) core.Future[int] {
		return future.Ready(len(user) * 7)
	}
	f := future.Then(countdown("ada", 2), lookup)
	fmt.Println(future.Wait(f))
	// Output: 21
}

func ExampleJoin2() {
	both := future.Wait(future.Join2(countdown("left", 3), future.Ready(42)))
	fmt.Println(both.First, both.Second)
	// Output: left 42
}

func ExampleJoinAll() {
	out := future.Wait(future.JoinAll([]core.Future[string]{
		countdown("slow", 5),
		countdown("fast", 1),
		countdown("medium", 3),
	}))
	fmt.Println(out) // input order, not completion order
	// Output: [slow fast medium]
}

func ExampleTryJoinAll() {
	ok := func(v int) core.Future[core.Result[int]] { return future.Ready(core.Result[int]{Value: v}) }
	fail := func(msg string) core.Future[core.Result[int]] {
		return future.Ready(core.Result[int]{Err: errors.New(msg)})
	}

	r := future.Wait(future.TryJoinAll([]core.Future[core.Result[int]]{ok(1), ok(2)}))
	fmt.Println(r.Value, r.Err)

	// The first error wins; the other futures, still pending, are dropped.
	r = future.Wait(future.TryJoinAll([]core.Future[core.Result[int]]{
		future.Pending[core.Result[int]](), fail("disk full"), ok(3),
	}))
	fmt.Println(r.Value, r.Err)
	// Output:
	// [1 2] <nil>
	// [] disk full
}

func ExampleSelect() {
	s := future.Wait(future.Select(
		future.Pending[string](),
		countdown("second", 2),
		countdown("third", 10),
	))
	fmt.Println(s.Index, s.Value)
	// Output: 1 second
}

func ExampleSelect2() {
	e := future.Wait(future.Select2(future.Pending[int](), countdown("timeout", 2)))
	switch e.Index {
	case 0:
		fmt.Println("value", e.First)
	case 1:
		fmt.Println("gave up:", e.Second)
	}
	// Output: gave up: timeout
}

func ExamplePending() {
	// Pending never finishes, so the other branch always wins.
	s := future.Wait(future.Select(future.Pending[int](), future.Ready(7)))
	fmt.Println(s.Index, s.Value)
	// Output: 1 7
}
