package mpsc_test

import (
	"fmt"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

// In a coroutine body a channel reads like Go's: a producer task sends,
// the body receives until the channel is closed. Each wait suspends only
// the task; the bounded channel makes the producer wait for room.
func Example_inACoroutineBody() {
	err := weft.Run(func(c *weft.Ctx) error {
		tx, rx := mpsc.New[string](2)
		weft.Go(c, func(c *weft.Ctx) error {
			defer tx.Close()
			for _, w := range []string{"spawn", "send", "close"} {
				if err := weft.Await(c, tx.Send(w)); err != nil {
					return err
				}
			}
			return nil
		})
		for {
			w, err := weft.Await(c, rx.Recv()).Unwrap()
			if err != nil {
				fmt.Println(err)
				return nil
			}
			fmt.Println(w)
		}
	})
	fmt.Println(err)
	// Output:
	// spawn
	// send
	// close
	// weft/mpsc: channel closed
	// <nil>
}
