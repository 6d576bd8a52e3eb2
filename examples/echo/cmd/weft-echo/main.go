// Command weft-echo is an echo server on weft: every connection gets back
// what it sends until it shuts down its write side. Ctrl-C (or SIGTERM)
// stops it gracefully: it stops accepting, lets open connections finish
// for up to -grace, then closes them.
//
//	weft-echo [-addr 127.0.0.1:7007] [-grace 5s]
//
// It runs on the default runtime (WEFT_ environment variables choose
// another composition) and is built on the weft package alone, so it
// links no plugin support (add import _ "github.com/weftrt/weft/plugins"
// for kind: plugin).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/echo"
	"github.com/weftrt/weft/lib/wnet"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7007", "address to listen on")
	grace := flag.Duration("grace", 5*time.Second, "how long open connections may go on after ctrl-c")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := weft.Run(func(c *weft.Ctx) error {
		ln, err := wnet.ListenTCP(c.Context(), "tcp", *addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "weft-echo: listening on %s (pid %d)\n", ln.Addr(), os.Getpid())
		return echo.Serve(c, ctx, ln, *grace)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintln(os.Stderr, "weft-echo: stopped")
}
