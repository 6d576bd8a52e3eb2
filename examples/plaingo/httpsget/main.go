// Command httpsget is examples/httpsget written with net/http's client,
// the same program, for comparing the two.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"time"
)

func main() {
	printBody := flag.Bool("body", false, "print the body")
	timeout := flag.Duration("timeout", 10*time.Second, "for the whole request")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: httpsget [-body] [-timeout 10s] https://host/path")
	}
	client := &http.Client{Timeout: *timeout}
	req, err := http.NewRequest(http.MethodGet, flag.Arg(0), nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("User-Agent", "weft-httpsget")
	resp, err := client.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d %d bytes\n", resp.StatusCode, len(body))
	if *printBody {
		os.Stdout.Write(body)
	}
}
