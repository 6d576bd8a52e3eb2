package watch_test

import (
	"fmt"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/lib/wsync/watch"
)

// A watch channel holds the latest value; a receiver waits for a change
// and reads the value as it is then. Here a task waits for the
// configuration to leave its initial state.
func Example_inACoroutineBody() {
	_ = weft.Run(func(c *weft.Ctx) error {
		tx, rx := watch.New("starting")
		h := weft.Go(c, func(c *weft.Ctx) string {
			for rx.Borrow() != "ready" {
				if err := weft.Await(c, rx.Changed()); err != nil {
					return "sender gone"
				}
			}
			return rx.Borrow()
		})
		if err := tx.Send("loading"); err != nil {
			return err
		}
		if err := tx.Send("ready"); err != nil {
			return err
		}
		fmt.Println(weft.Await(c, h).Value)
		return nil
	})
	// Output: ready
}
