// Command testplugin is a deliberately faulty plugin for the host's tests.
// Its first argument chooses the fault:
//
//	cookie    serves with another magic cookie value
//	protocol  offers only protocol version 99
//	kind      describes itself as a timer plugin
//	garbage   prints a line that is not a handshake and exits
//	log       serves the epoll driver and logs a record at start
package main

import (
	"fmt"
	"os"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/plugins/internal/server"
	"github.com/weftrt/weft/plugins/internal/wire"
)

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	ds := &server.DriverService{New: func() (core.Driver, error) { return epoll.New(epoll.DefaultEvents) }, Log: server.Logger()}
	o := server.Options{
		Info:     wire.Info{Kind: wire.KindDriver, Name: "test-" + mode},
		Register: ds.Register,
	}
	switch mode {
	case "cookie":
		o.Cookie = "not-the-weft-cookie"
	case "protocol":
		o.Versions = []int{99}
	case "kind":
		o.Info.Kind = wire.KindTimer
	case "garbage":
		fmt.Println("hello, I am not a plugin")
		os.Exit(0)
	case "log":
		server.Logger().Warn("test plugin starting", "answer", 42)
	}
	server.Serve(o)
}
