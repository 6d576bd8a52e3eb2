package oneshot_test

import (
	"fmt"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/lib/wsync/oneshot"
)

// A oneshot channel hands one value from a task to whoever waits for it:
// here a task computes, the body awaits the answer.
func Example_inACoroutineBody() {
	_ = weft.Run(func(c *weft.Ctx) error {
		tx, rx := oneshot.New[int]()
		weft.Go(c, func(c *weft.Ctx) error { return tx.Send(6 * 7) })
		v, err := weft.Await(c, rx.Recv()).Unwrap()
		fmt.Println(v, err)
		return nil
	})
	// Output: 42 <nil>
}
