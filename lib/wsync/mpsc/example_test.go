package mpsc_test

import (
	"fmt"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

// A bounded channel: sends wait for room, the receiver sees the messages in
// order and then ErrClosed. Tasks poll the futures; outside a runtime
// future.Wait drives them.
func ExampleNew() {
	tx, rx := mpsc.New[string](2)
	go func() {
		defer tx.Close()
		var send mpsc.SendFuture[string] // reused: sending allocates nothing
		for _, w := range []string{"a", "b", "c"} {
			if err := future.Wait[error](tx.SendInto(&send, w)); err != nil {
				return
			}
		}
	}()
	for {
		r := future.Wait[core.Result[string]](rx.Recv())
		if r.Err != nil {
			fmt.Println(r.Err)
			return
		}
		fmt.Println(r.Value)
	}
	// Output:
	// a
	// b
	// c
	// weft/mpsc: channel closed
}

// TrySend never waits: it reports a full channel.
func ExampleSender_TrySend() {
	tx, rx := mpsc.New[int](1)
	fmt.Println(tx.TrySend(1))
	fmt.Println(tx.TrySend(2))
	v, _ := rx.TryRecv()
	fmt.Println(v)
	// Output:
	// <nil>
	// weft/mpsc: channel full
	// 1
}

// Reserve first, decide what to send once capacity is certain.
func ExampleSender_Reserve() {
	tx, rx := mpsc.New[string](4)
	r := future.Wait[core.Result[mpsc.Permit[string]]](tx.ReserveMany(2))
	p := r.Value
	p.Send("first")
	p.Release() // the second slot goes back
	fmt.Println(tx.Capacity(), rx.Len())
	// Output: 3 1
}

// An unbounded sender never waits.
func ExampleNewUnbounded() {
	tx, rx := mpsc.NewUnbounded[int]()
	for i := 0; i < 3; i++ {
		_ = tx.Send(i)
	}
	tx.Close()
	got := future.Wait[core.Result[[]int]](rx.RecvMany(nil, 10))
	fmt.Println(got.Value)
	// Output: [0 1 2]
}
