// Package chat is the classic line-based chat server on weft, in
// coroutine tasks: a client connects, gives its name, and every line it
// sends goes to every other client as "name: line"; joins and leaves are
// announced. On a stop (ctrl-c in cmd/chat) every client is told, the
// connections close, and Serve returns. examples/plaingo/chat is the same
// program on goroutines.
package chat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/tasks"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/lib/wsync/broadcast"
)

// message is one line for the clients; from is the client that caused it
// (0 for the server), and leave marks the last message about a client.
type message struct {
	from  uint64
	text  string
	leave bool
}

// Backlog is how many messages a slow client may fall behind before it
// misses some (it is told how many).
const Backlog = 256

// Serve runs the chat on ln until ctx is done or ln fails, then says
// goodbye to every client, closes the connections and returns once every
// client's tasks have ended: nil after a stop by ctx, the accept error
// otherwise.
func Serve(c *co.Ctx, ctx context.Context, ln *wnet.TCPListener) error {
	stopAccepting := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopAccepting()
	room, unused := broadcast.New[message](Backlog)
	unused.Close()    // each client subscribes its own
	var open sync.Map // *wnet.TCPStream -> struct{}
	clients := tasks.NewTaskTracker()
	var acceptErr error
	for id := uint64(1); ; id++ {
		s, err := co.AwaitResult(c, ln.Accept())
		if err != nil {
			if ctx.Err() == nil {
				acceptErr = err
			}
			break
		}
		open.Store(s, struct{}{})
		// Subscribed before the client's task starts: it misses nothing
		// said after it connected.
		inbox := room.Subscribe()
		core.Drop(tasks.Spawn(clients, c, co.Future(func(c *co.Ctx) error {
			defer open.Delete(s)
			defer s.Close()
			return client(c, s, id, room, inbox)
		})))
	}
	room.Send(message{text: "* the server is shutting down"})
	room.Close() // each writer ends after the goodbye
	clients.Close()
	open.Range(func(s, _ any) bool { s.(*wnet.TCPStream).CloseRead(); return true })
	co.Await(c, clients.Wait())
	return acceptErr
}

// client serves one connection: it asks for a name, then relays lines to
// the room while a writer task of its own relays the room to the client.
func client(c *co.Ctx, s *wnet.TCPStream, id uint64, room *broadcast.Sender[message], inbox *broadcast.Receiver[message]) error {
	conn := co.Conn(c, s) // this task's view of the stream; the writer has its own
	in := bufio.NewScanner(conn)
	fmt.Fprint(conn, "name? ")
	if !in.Scan() {
		inbox.Close()
		return in.Err()
	}
	name := strings.TrimSpace(in.Text())
	// The join is announced before the welcome, so a client that has read
	// its welcome knows everyone already in the room heard it arrive.
	room.Send(message{from: id, text: "* " + name + " has joined"})
	fmt.Fprintf(conn, "* welcome, %s\n", name)
	writer := co.Go(c, func(c *co.Ctx) error { return relay(c, s, id, inbox) })
	for in.Scan() {
		room.Send(message{from: id, text: name + ": " + in.Text()})
	}
	room.Send(message{from: id, text: "* " + name + " has left", leave: true})
	_, err := co.AwaitResult(c, writer)
	return err
}

// relay writes the room's messages, other than the client's own, to the
// client until the client leaves or the room closes.
func relay(c *co.Ctx, s *wnet.TCPStream, id uint64, inbox *broadcast.Receiver[message]) error {
	conn := co.Conn(c, s)
	defer inbox.Close()
	for {
		m, err := co.AwaitResult(c, inbox.Recv())
		var lagged broadcast.LaggedError
		switch {
		case errors.As(err, &lagged):
			fmt.Fprintf(conn, "* you missed %d messages\n", lagged.Missed)
			continue
		case err != nil: // the room closed
			return nil
		case m.from == id && m.leave:
			return nil
		case m.from == id:
			continue
		}
		if _, err := fmt.Fprintln(conn, m.text); err != nil {
			return err
		}
	}
}
