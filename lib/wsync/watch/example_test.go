package watch_test

import (
	"fmt"

	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/watch"
)

// Receivers wait for a change and read the latest value; values they did
// not look at in between are skipped.
func ExampleNew() {
	tx, rx := watch.New("v1")
	_ = tx.Send("v2")
	_ = tx.Send("v3")
	fmt.Println(future.Wait[error](rx.Changed()), rx.BorrowAndUpdate())
	tx.Close()
	fmt.Println(future.Wait[error](rx.Changed()))
	// Output:
	// <nil> v3
	// weft/watch: channel closed
}
