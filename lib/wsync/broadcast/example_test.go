package broadcast_test

import (
	"fmt"

	"github.com/weftrt/weft/lib/wsync/broadcast"
)

// Every receiver sees every message; one that falls behind the ring's
// capacity is told how many it missed.
func ExampleNew() {
	tx, fast := broadcast.New[int](2)
	slow := tx.Subscribe()
	for i := 1; i <= 4; i++ {
		_, _ = tx.Send(i)
		if i <= 2 {
			v, _ := fast.TryRecv()
			fmt.Println("fast", v)
		}
	}
	_, err := slow.TryRecv()
	fmt.Println("slow", err)
	v, _ := slow.TryRecv()
	fmt.Println("slow", v)
	// Output:
	// fast 1
	// fast 2
	// slow weft/broadcast: receiver lagged behind and missed 2 messages
	// slow 3
}
