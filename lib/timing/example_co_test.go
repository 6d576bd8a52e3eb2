package timing_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/lib/wsync/oneshot"
)

// Sleeping in a body suspends the task on the runtime's timer; the worker
// runs other tasks meanwhile.
func ExampleSleep_inACoroutineBody() {
	_ = weft.Run(func(c *weft.Ctx) error {
		start := time.Now()
		weft.Await(c, timing.Sleep(20*time.Millisecond))
		fmt.Println("slept at least 20ms:", time.Since(start) >= 20*time.Millisecond)
		return nil
	})
	// Output: slept at least 20ms: true
}

// Timeout bounds any future: here a reply that never comes. The abandoned
// receive is dropped, and the error says the deadline passed.
func ExampleTimeout_inACoroutineBody() {
	_ = weft.Run(func(c *weft.Ctx) error {
		tx, rx := oneshot.New[string]()
		defer tx.Close()
		_, err := weft.Await(c, timing.Timeout(rx.Recv(), 10*time.Millisecond)).Unwrap()
		fmt.Println(errors.Is(err, timing.ErrElapsed))
		return nil
	})
	// Output: true
}
