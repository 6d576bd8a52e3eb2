// Command epoll-driver serves weft's epoll driver (drivers/epoll) as a
// plugin: the host runs it as a child process and sends it socket
// operations over one gRPC stream. Build it, take its digest, and select it
// in a configuration:
//
//	go build -o epoll-driver ./plugins/examples/epoll-driver
//	sha256sum epoll-driver
//
//	driver: {kind: plugin, path: ./epoll-driver, sha256: <digest>}
//
// Run by hand, it explains that it is a plugin and exits.
package main

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/plugins/sdk"
)

func main() {
	sdk.ServeDriver("epoll", func() (core.Driver, error) {
		return epoll.New(epoll.DefaultEvents)
	})
}
