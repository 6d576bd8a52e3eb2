package wfs_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wfs"
)

// File operations are futures. In a task they run on the runtime's blocking
// pool (or through a driver with FileIO); polled outside a runtime, as
// here, they run on a goroutine of their own.
func ExampleReadFile() {
	path := filepath.Join(os.TempDir(), "weft-fs-example.txt")
	defer os.Remove(path)

	done := make(chan struct{}, 1)
	cx := core.NewContext(core.WakerFunc(func() {
		select {
		case done <- struct{}{}:
		default:
		}
	}))
	wait := func(f core.Future[core.Result[[]byte]]) core.Result[[]byte] {
		for {
			if r, ok := f.Poll(cx); ok {
				return r
			}
			<-done
		}
	}

	write := wfs.WriteFile(path, []byte("hello from weft\n"), 0o600)
	for {
		if r, ok := write.Poll(cx); ok {
			fmt.Println("write:", r.Err)
			break
		}
		<-done
	}
	r := wait(wfs.ReadFile(path))
	fmt.Printf("read: %q %v\n", r.Value, r.Err)
	// Output:
	// write: <nil>
	// read: "hello from weft\n" <nil>
}
