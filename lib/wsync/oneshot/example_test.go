package oneshot_test

import (
	"fmt"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/oneshot"
)

// A oneshot channel carries one reply.
func ExampleNew() {
	tx, rx := oneshot.New[int]()
	go func() { _ = tx.Send(6 * 7) }()
	r := future.Wait[core.Result[int]](rx.Recv())
	fmt.Println(r.Value, r.Err)
	// Output: 42 <nil>
}

// A sender closed without sending ends the receive with ErrClosed.
func ExampleSender_Close() {
	tx, rx := oneshot.New[int]()
	tx.Close()
	r := future.Wait[core.Result[int]](rx.Recv())
	fmt.Println(r.Err)
	// Output: weft/oneshot: channel closed
}
