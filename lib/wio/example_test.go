package wio_test

import (
	"fmt"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
)

// A Duplex pair stands in for a socket in tests: write at one end, read at
// the other. Outside a runtime, a future can be driven by polling it; in a
// task, its Poll is called by the scheduler.
func ExampleDuplex() {
	client, server := wio.Duplex(64)
	cx := core.NewContext(nil)

	w, _ := wio.WriteAll(client, []byte("ping")).Poll(cx)
	client.CloseWrite()
	r, _ := wio.ReadAll(server).Poll(cx)
	fmt.Println(w.Value, string(r.Value), r.Err)
	// Output: 4 ping <nil>
}

// ReadFull keeps reading until the buffer is full; the end of the stream
// part-way is io.ErrUnexpectedEOF.
func ExampleReadFull() {
	a, b := wio.Duplex(64)
	cx := core.NewContext(nil)
	a.Write([]byte("abc")).Poll(cx)
	a.CloseWrite()

	buf := make([]byte, 5)
	r, _ := wio.ReadFull(b, buf).Poll(cx)
	fmt.Println(r.Value, r.Err)
	// Output: 3 unexpected EOF
}
