package blocking_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/blocking"
)

// A blocking job returns an ordinary JoinHandle. A task awaits it by polling
// it from its own future; outside a runtime, as here, poll it with a waker
// that signals a channel.
func ExampleSpawn() {
	p := blocking.New(blocking.Config{Name: "example"})
	defer p.Shutdown(-1)

	h := blocking.Spawn(p, func() string {
		// Stands for a call that blocks, such as os.ReadFile.
		return strings.ToUpper("contents")
	})

	woken := make(chan struct{}, 1)
	cx := core.NewContext(core.WakerFunc(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}))
	for {
		if r, ok := h.Poll(cx); ok {
			fmt.Println(r.Value, r.Err)
			return
		}
		<-woken
	}
	// Output: CONTENTS <nil>
}

// SpawnBlockingFunc is the fire-and-forget form that schedulers use through
// core.BlockingSpawner. After Shutdown it refuses work with an error that
// wraps core.ErrShutdown.
func ExamplePool_SpawnBlockingFunc() {
	p := blocking.New(blocking.Config{Name: "example"})

	done := make(chan struct{})
	if err := p.SpawnBlockingFunc(func() { close(done) }); err != nil {
		fmt.Println(err)
	}
	<-done

	fmt.Println(p.Shutdown(-1))
	err := p.SpawnBlockingFunc(func() {})
	fmt.Println(errors.Is(err, core.ErrShutdown))
	// Output:
	// true
	// true
}
