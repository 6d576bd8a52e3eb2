package wnet_test

import (
	"fmt"
	"log"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"
)

// A listener is created inside the runtime (here from outside, with
// OnRuntime); a dial is a future like any other operation.
func ExampleOnRuntime() {
	r, err := rt.NewBuilder().Driver("epoll").Build() // needs the epoll module linked
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("listening on", ln.Addr())
}

// An operation gets a deadline by wrapping its future in io.Timeout. If the
// deadline passes first, the read is dropped (nothing is lost: no byte was
// taken) and the error matches os.ErrDeadlineExceeded.
func ExampleTCPStream_Read_withATimeout() {
	var s *wnet.TCPStream // accepted or dialled earlier in the task
	buf := make([]byte, 512)
	op := wio.Timeout(s.Read(buf), 5*time.Second)
	_ = op // poll op from the task's Poll until it is ready
}
