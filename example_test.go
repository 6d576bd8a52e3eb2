package weft_test

import (
	"errors"
	"fmt"

	"github.com/weftrt/weft"
)

// A main body on the default runtime: spawn a task, await its handle.
func Example() {
	err := weft.Run(func(c *weft.Ctx) error {
		h := weft.Go(c, func(c *weft.Ctx) int { return 41 })
		v, err := weft.Await(c, h).Unwrap()
		fmt.Println(v+1, err)
		return err
	})
	fmt.Println(err)
	// Output:
	// 42 <nil>
	// <nil>
}

// Main returns the body's value, and its error exactly as returned.
func ExampleMain() {
	errEmpty := errors.New("empty input")
	n, err := weft.Main(func(c *weft.Ctx) (int, error) {
		words := []string{"spawn", "await", "return"}
		if len(words) == 0 {
			return 0, errEmpty
		}
		return len(words), nil
	})
	fmt.Println(n, err)
	// Output: 3 <nil>
}

// Tasks fan out with Go and are joined by awaiting their handles, in any
// order.
func ExampleGo() {
	sum, err := weft.Main(func(c *weft.Ctx) (int, error) {
		var hs []*weft.JoinHandle[int]
		for i := 1; i <= 10; i++ {
			hs = append(hs, weft.Go(c, func(c *weft.Ctx) int { return i * i }))
		}
		sum := 0
		for _, h := range hs {
			v, err := weft.Await(c, h).Unwrap()
			if err != nil {
				return 0, err
			}
			sum += v
		}
		return sum, nil
	})
	fmt.Println(sum, err)
	// Output: 385 <nil>
}

// RunOn runs a body on a runtime composed in Go (or from a configuration
// file with weft.Open); the runtime stays open for more.
func ExampleRunOn() {
	r, err := weft.NewBuilder().IgnoreEnv().Scheduler("currentthread").Build()
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for i := range 2 {
		err := weft.RunOn(r, func(c *weft.Ctx) error {
			c.Yield()
			fmt.Println("body", i, "ran")
			return nil
		})
		fmt.Println(err)
	}
	// Output:
	// body 0 ran
	// <nil>
	// body 1 ran
	// <nil>
}
