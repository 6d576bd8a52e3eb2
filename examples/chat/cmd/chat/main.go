// Command chat is a line-based chat server on weft: connect with
// `nc 127.0.0.1 7008`, give a name, and talk. Ctrl-C tells every client
// and stops.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/chat"
	"github.com/weftrt/weft/lib/wnet"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7008", "address to listen on")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := weft.Run(func(c *weft.Ctx) error {
		ln, err := wnet.ListenTCP(c.Context(), "tcp", *addr)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "chat: listening on %s (pid %d)\n", ln.Addr(), os.Getpid())
		return chat.Serve(c, ctx, ln)
	})
	if err != nil {
		log.Fatal(err)
	}
}
