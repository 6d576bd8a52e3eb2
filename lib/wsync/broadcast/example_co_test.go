package broadcast_test

import (
	"fmt"
	"strings"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/lib/wsync/broadcast"
)

// Every subscriber of a broadcast channel receives every message sent
// after it subscribed. Two listener tasks each collect what they hear
// until the sender closes.
func Example_inACoroutineBody() {
	_ = weft.Run(func(c *weft.Ctx) error {
		tx, first := broadcast.New[string](8)
		second := tx.Subscribe()
		listen := func(rx *broadcast.Receiver[string]) *weft.JoinHandle[string] {
			return weft.Go(c, func(c *weft.Ctx) string {
				var heard []string
				for {
					msg, err := weft.Await(c, rx.Recv()).Unwrap()
					if err != nil { // closed: every message has been received
						return strings.Join(heard, " ")
					}
					heard = append(heard, msg)
				}
			})
		}
		a, b := listen(first), listen(second)
		for _, m := range []string{"hello", "to", "all"} {
			if _, err := tx.Send(m); err != nil {
				return err
			}
		}
		tx.Close()
		fmt.Println(weft.Await(c, a).Value)
		fmt.Println(weft.Await(c, b).Value)
		return nil
	})
	// Output:
	// hello to all
	// hello to all
}
