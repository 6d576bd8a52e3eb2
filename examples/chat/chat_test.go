package chat_test

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/examples/chat"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wnet"
)

type client struct {
	conn net.Conn
	in   *bufio.Reader
}

func join(t *testing.T, addr, name string) *client {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	cl := &client{conn: conn, in: bufio.NewReader(conn)}
	prompt := make([]byte, len("name? "))
	_, err = cl.in.Read(prompt)
	require.NoError(t, err)
	require.Equal(t, "name? ", string(prompt))
	_, err = conn.Write([]byte(name + "\n"))
	require.NoError(t, err)
	// After the welcome, every client already in the room has been sent
	// the join, and this one hears everything said from here on.
	cl.expect(t, "* welcome, "+name)
	return cl
}

func (cl *client) say(t *testing.T, line string) {
	t.Helper()
	_, err := cl.conn.Write([]byte(line + "\n"))
	require.NoError(t, err)
}

func (cl *client) expect(t *testing.T, want string) {
	t.Helper()
	require.NoError(t, cl.conn.SetReadDeadline(time.Now().Add(time.Minute))) // a hang guard
	got, err := cl.in.ReadString('\n')
	require.NoError(t, err, "waiting for %q", want)
	require.Equal(t, want, strings.TrimSuffix(got, "\n"))
}

// Three clients: each hears the others join, talk and leave, never its
// own lines; a stop says goodbye to whoever is left and Serve returns.
func TestClientsHearEachOtherAndTheGoodbye(t *testing.T) {
	r, err := weft.NewBuilder().IgnoreEnv().Build()
	require.NoError(t, err)
	defer r.Close()
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := make(chan error, 1)
	go func() { done <- co.Run(r, func(c *co.Ctx) error { return chat.Serve(c, ctx, ln) }) }()
	addr := ln.Addr().String()

	ann := join(t, addr, "ann")
	bob := join(t, addr, "bob")
	ann.expect(t, "* bob has joined")
	cat := join(t, addr, "cat")
	ann.expect(t, "* cat has joined")
	bob.expect(t, "* cat has joined")

	ann.say(t, "hello")
	bob.expect(t, "ann: hello")
	cat.expect(t, "ann: hello")
	cat.say(t, "hi ann")
	ann.expect(t, "cat: hi ann")
	bob.expect(t, "cat: hi ann")

	require.NoError(t, bob.conn.Close())
	ann.expect(t, "* bob has left")
	cat.expect(t, "* bob has left")

	stop()
	ann.expect(t, "* the server is shutting down")
	cat.expect(t, "* the server is shutting down")
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(time.Minute): // a hang guard, not a measurement
		t.Fatal("Serve did not return after the stop")
	}
}
