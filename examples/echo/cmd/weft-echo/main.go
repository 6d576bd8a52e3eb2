// Command weft-echo is an echo server on weft: every connection gets back
// what it sends until it shuts down its write side.
//
//	weft-echo -addr 127.0.0.1:7007 [-config weft.yaml] [-impl weft|go|go-copy]
//
// With -impl go or go-copy it serves with Go's net instead, the
// counterpart the benchmarks compare against.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/core"
	wnet "github.com/weftrt/weft/core/net"
	"github.com/weftrt/weft/core/rt"
	"github.com/weftrt/weft/examples/echo"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7007", "address to listen on")
	config := flag.String("config", "", "weft configuration file (default: currentthread, epoll, wheel; WEFT_ variables apply)")
	impl := flag.String("impl", "weft", "server implementation: weft, go or go-copy")
	buf := flag.Int("buffer", echo.DefaultBufferSize, "copy buffer per connection, in bytes")
	flag.Parse()

	if *impl != string(echo.Weft) {
		log.Fatal(echo.ServeGo(echo.Impl(*impl), *addr, *buf))
	}
	b := weft.NewBuilder()
	if *config != "" {
		b.ConfigFile(*config)
	} else {
		for k, v := range echo.DefaultSettings() {
			b.Set(k, v)
		}
	}
	r, err := b.Build()
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
	serveErr, err := rt.BlockOn(r, echo.Serve(ln, *buf))
	if err == nil {
		err = serveErr
	}
	log.Fatal(err)
}
