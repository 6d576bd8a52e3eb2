// Command chat is examples/chat written with goroutines and Go channels,
// the same program, for comparing the two.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
)

type message struct {
	from  uint64
	text  string
	leave bool
}

const backlog = 256

// room fans each message out to every subscriber's channel; a full
// channel drops the message for that subscriber, who is told how many it
// missed.
type room struct {
	mu     sync.Mutex
	subs   map[uint64]chan message
	missed map[uint64]int
	closed bool
}

func (r *room) subscribe(id uint64) chan message {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := make(chan message, backlog)
	r.subs[id] = ch
	return ch
}

func (r *room) send(m message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, ch := range r.subs {
		select {
		case ch <- m:
		default:
			r.missed[id]++
		}
	}
	if ch, ok := r.subs[m.from]; ok && m.leave {
		close(ch)
		delete(r.subs, m.from)
	}
}

func (r *room) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, ch := range r.subs {
		close(ch)
		delete(r.subs, id)
	}
}

func main() {
	addr := flag.String("addr", "127.0.0.1:7008", "address to listen on")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "chat: listening on %s (pid %d)\n", ln.Addr(), os.Getpid())
	if err := serve(ctx, ln); err != nil {
		log.Fatal(err)
	}
}

// serve is examples/chat's Serve.
func serve(ctx context.Context, ln net.Listener) error {
	stopAccepting := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopAccepting()
	rm := &room{subs: map[uint64]chan message{}, missed: map[uint64]int{}}
	var open sync.Map
	var clients sync.WaitGroup
	var acceptErr error
	for id := uint64(1); ; id++ {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() == nil {
				acceptErr = err
			}
			break
		}
		open.Store(conn, struct{}{})
		inbox := rm.subscribe(id)
		clients.Add(1)
		go func() {
			defer clients.Done()
			defer open.Delete(conn)
			defer conn.Close()
			client(conn, id, rm, inbox)
		}()
	}
	rm.send(message{text: "* the server is shutting down"})
	rm.close()
	open.Range(func(c, _ any) bool { c.(*net.TCPConn).CloseRead(); return true })
	clients.Wait()
	return acceptErr
}

func client(conn net.Conn, id uint64, rm *room, inbox chan message) {
	in := bufio.NewScanner(conn)
	fmt.Fprint(conn, "name? ")
	if !in.Scan() {
		rm.send(message{from: id, leave: true})
		return
	}
	name := strings.TrimSpace(in.Text())
	rm.send(message{from: id, text: "* " + name + " has joined"})
	fmt.Fprintf(conn, "* welcome, %s\n", name)
	done := make(chan struct{})
	go func() { defer close(done); relay(conn, id, rm, inbox) }()
	for in.Scan() {
		rm.send(message{from: id, text: name + ": " + in.Text()})
	}
	rm.send(message{from: id, text: "* " + name + " has left", leave: true})
	<-done
}

func relay(conn net.Conn, id uint64, rm *room, inbox chan message) {
	for m := range inbox {
		rm.mu.Lock()
		missed := rm.missed[id]
		rm.missed[id] = 0
		rm.mu.Unlock()
		if missed > 0 {
			fmt.Fprintf(conn, "* you missed %d messages\n", missed)
		}
		if m.from == id {
			continue
		}
		if _, err := fmt.Fprintln(conn, m.text); err != nil {
			return
		}
	}
}
