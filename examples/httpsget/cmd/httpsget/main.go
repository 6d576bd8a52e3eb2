// Command httpsget fetches an https URL on weft and prints the status and
// the body's size (or the body, with -body).
//
//	httpsget [-body] [-timeout 10s] https://example.com/
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/httpsget"
)

func main() {
	printBody := flag.Bool("body", false, "print the body")
	timeout := flag.Duration("timeout", 10*time.Second, "for the whole request")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: httpsget [-body] [-timeout 10s] https://host/path")
	}
	rawURL := flag.Arg(0)
	addr, err := httpsget.Resolve(context.Background(), rawURL)
	if err != nil {
		log.Fatal(err)
	}
	resp, err := weft.Main(func(c *weft.Ctx) (*httpsget.Response, error) {
		return httpsget.Get(c, rawURL, addr, nil, *timeout)
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d %d bytes\n", resp.Status, len(resp.Body))
	if *printBody {
		os.Stdout.Write(resp.Body)
	}
}
