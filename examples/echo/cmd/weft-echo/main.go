// Command weft-echo is an echo server on weft: every connection gets back
// what it sends until it shuts down its write side.
//
//	weft-echo [-addr 127.0.0.1:7007] [-config weft.yaml]
//
// It is built on the weft package alone, so it links no plugin support
// (add import _ "github.com/weftrt/weft/plugins" for kind: plugin).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/examples/echo"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wnet"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7007", "address to listen on")
	config := flag.String("config", "", "weft configuration file (default: the weft package's composition; WEFT_ variables apply)")
	flag.Parse()

	r, err := weft.Open(*config)
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", *addr)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "weft-echo: listening on %s (pid %d)\n", ln.Addr(), os.Getpid())
	log.Fatal(co.Run(r, func(c *co.Ctx) error { return echo.Serve(c, ln) }))
}
