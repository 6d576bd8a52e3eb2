package echo_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/examples/echo"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wnet"
)

// Each client sends lines and reads each one back before the next, several
// clients at once; cancelling the context then ends Serve with no error.
func TestEveryClientGetsBackEachLineItSends(t *testing.T) {
	for _, scheduler := range []string{"currentthread", "workstealing"} {
		t.Run(scheduler, func(t *testing.T) {
			r, err := weft.NewBuilder().IgnoreEnv().Scheduler(scheduler).Driver("epoll").Timer("wheel").Build()
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
				return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
			})
			require.NoError(t, err)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			done := make(chan error, 1)
			go func() {
				done <- co.Run(r, func(c *co.Ctx) error { return echo.Serve(c, ctx, ln, time.Minute) })
			}()

			clients := make(chan error, 5)
			for i := range cap(clients) {
				go func() { clients <- talk(ln.Addr().String(), i) }()
			}
			for range cap(clients) {
				assert.NoError(t, <-clients)
			}

			stop()
			select {
			case err := <-done:
				assert.NoError(t, err, "a stop by the context is not an error")
			case <-time.After(time.Minute): // a hang guard, not a measurement
				t.Fatal("Serve went on after its context was done")
			}
			assert.True(t, ln.IsClosed(), "Serve closes its listener when it stops")
		})
	}
}

// talk sends 50 lines to the server at addr, checking each echo, then
// shuts down its write side and expects the server to close.
func talk(addr string, id int) error {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	in := bufio.NewReader(conn)
	for n := range 50 {
		line := fmt.Sprintf("client %d line %d\n", id, n)
		if _, err := conn.Write([]byte(line)); err != nil {
			return err
		}
		got, err := in.ReadString('\n')
		if err != nil {
			return fmt.Errorf("client %d, line %d: %w", id, n, err)
		}
		if got != line {
			return fmt.Errorf("client %d sent %q, got back %q", id, line, got)
		}
	}
	if err := conn.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	if rest, err := in.ReadString('\n'); rest != "" || err == nil {
		return fmt.Errorf("client %d: after its write side closed, got %q, %v; want the server to close", id, rest, err)
	}
	return nil
}

// serve starts Serve on a fresh default-composition runtime and returns
// the listener's address, the context's cancel, and Serve's result.
func serve(t *testing.T, grace time.Duration) (*wnet.TCPListener, context.CancelFunc, <-chan error) {
	t.Helper()
	r, err := weft.NewBuilder().IgnoreEnv().Build()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, r.Close()) })
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	done := make(chan error, 1)
	go func() { done <- co.Run(r, func(c *co.Ctx) error { return echo.Serve(c, ctx, ln, grace) }) }()
	return ln, stop, done
}

// echoLine writes line and reads it back.
func echoLine(t *testing.T, conn net.Conn, in *bufio.Reader, line string) {
	t.Helper()
	_, err := conn.Write([]byte(line))
	require.NoError(t, err)
	got, err := in.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, line, got)
}

// After the stop, the server accepts no new connection, but one already
// open goes on being served until its client is done, within the grace.
func TestAStoppedServerFinishesOpenConnectionsWithinTheGrace(t *testing.T) {
	ln, stop, done := serve(t, time.Hour)
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	in := bufio.NewReader(conn)
	echoLine(t, conn, in, "before the stop\n")

	stop()
	for !ln.IsClosed() { // the listener closes on another goroutine
		time.Sleep(time.Millisecond)
	}
	_, err = net.Dial("tcp", ln.Addr().String())
	require.Error(t, err, "a stopped server must refuse new connections")

	echoLine(t, conn, in, "after the stop\n")
	select {
	case err := <-done:
		t.Fatalf("Serve returned (%v) while a connection was still open", err)
	default:
	}
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	_, err = in.ReadString('\n')
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, waitFor(t, done))
}

// A connection still open when the grace runs out is closed by the
// server, and Serve returns.
func TestAConnectionOpenPastTheGraceIsClosed(t *testing.T) {
	ln, stop, done := serve(t, 10*time.Millisecond)
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	in := bufio.NewReader(conn)
	echoLine(t, conn, in, "then silence\n")

	stop()
	require.NoError(t, waitFor(t, done))
	_, err = in.ReadString('\n')
	require.Error(t, err, "the server closes the connection it gave up on")
}

func waitFor(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(time.Minute): // a hang guard, not a measurement
		t.Fatal("Serve did not return")
		return nil
	}
}
