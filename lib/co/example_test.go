package co_test

import (
	"context"
	"fmt"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

// A select loop: receive messages while a ticker, kept armed across the
// iterations, fires every second, until the channel closes. The examples
// run on a runtime whose virtual clock jumps to the next deadline when no
// task can run, so they take no real time.
func ExampleSelect() {
	r := exampleRuntime()
	defer r.Close()
	err := co.Run(r, func(c *co.Ctx) error {
		tx, rx := mpsc.New[string](1)
		co.Go(c, func(c *co.Ctx) error {
			defer tx.Close()
			for _, m := range []string{"one", "two"} {
				co.Sleep(c, 1250*time.Millisecond) // at 1.25 s and 2.5 s
				if err := co.Await(c, tx.Send(m)); err != nil {
					return err
				}
			}
			return nil
		})

		tick := timing.Sleep(time.Second) // long-lived: stays armed
		defer core.Drop(tick)
		var msg core.Result[string]
		for {
			switch co.Select(c, co.Case(rx.Recv(), &msg), co.Keep(tick, nil)) {
			case 0:
				if msg.Err != nil {
					fmt.Println("closed")
					return nil
				}
				fmt.Println("message", msg.Value)
			case 1:
				fmt.Println("tick")
				tick.ResetAfter(time.Second)
			}
		}
	})
	fmt.Println(err)
	// Output:
	// tick
	// message one
	// tick
	// message two
	// closed
	// <nil>
}

// Sleeping in straight-line code, on the runtime's clock.
func ExampleSleep() {
	r := exampleRuntime()
	defer r.Close()
	elapsed, err := co.Main(r, func(c *co.Ctx) (time.Duration, error) {
		start := timing.Now(c.Context())
		co.Sleep(c, 250*time.Millisecond)
		co.Sleep(c, 750*time.Millisecond)
		return timing.Now(c.Context()).Sub(start), nil
	})
	fmt.Println(elapsed, err)
	// Output: 1s <nil>
}

// Waiting on a context.Context, plainly and as a select branch.
func ExampleWaitContext() {
	r := exampleRuntime()
	defer r.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour) // a real-time deadline
	defer cancel()
	err := co.Run(r, func(c *co.Ctx) error {
		// The select gives up on the context at the first (virtual) second.
		switch co.Select(c, co.Done(ctx), co.Case(timing.Sleep(time.Second), nil)) {
		case 0:
			fmt.Println("context done first")
		case 1:
			fmt.Println("slept first")
		}
		co.Go(c, func(*co.Ctx) int { cancel(); return 0 })
		return co.WaitContext(c, ctx)
	})
	fmt.Println(err)
	// Output:
	// slept first
	// context canceled
}

// Ranging over a channel until it is closed.
func ExampleRange() {
	r := exampleRuntime()
	defer r.Close()
	sum, err := co.Main(r, func(c *co.Ctx) (int, error) {
		tx, rx := mpsc.New[int](4)
		co.Go(c, func(c *co.Ctx) error {
			defer tx.Close()
			for i := 1; i <= 10; i++ {
				if err := co.Await(c, tx.Send(i)); err != nil {
					return err
				}
			}
			return nil
		})
		sum := 0
		for v := range co.Range(c, rx) {
			sum += v
		}
		return sum, nil
	})
	fmt.Println(sum, err)
	// Output: 55 <nil>
}
