// Command echo is examples/echo written on Go's net and goroutines, the
// same program line for line, for comparing the two.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:7007", "address to listen on")
	grace := flag.Duration("grace", 5*time.Second, "how long open connections may go on after ctrl-c")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "echo: listening on %s (pid %d)\n", ln.Addr(), os.Getpid())
	if err := serve(ctx, ln, *grace); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintln(os.Stderr, "echo: stopped")
}

// serve is examples/echo's Serve.
func serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	stopAccepting := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopAccepting()

	var open sync.Map
	var conns sync.WaitGroup
	var acceptErr error
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				acceptErr = err
				ln.Close()
			}
			break
		}
		open.Store(conn, struct{}{})
		conns.Add(1)
		go func() {
			defer conns.Done()
			defer open.Delete(conn)
			defer conn.Close()
			io.Copy(conn, conn)
		}()
	}

	done := make(chan struct{})
	go func() { conns.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		open.Range(func(c, _ any) bool { c.(net.Conn).Close(); return true })
		<-done
	}
	return acceptErr
}
