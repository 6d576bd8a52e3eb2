package echo_test

import (
	"bufio"
	"fmt"
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
// clients at once; closing the listener then ends Serve with net.ErrClosed.
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
			done := make(chan error, 1)
			go func() {
				done <- co.Run(r, func(c *co.Ctx) error { return echo.Serve(c, ln) })
			}()

			clients := make(chan error, 5)
			for i := range cap(clients) {
				go func() { clients <- talk(ln.Addr().String(), i) }()
			}
			for range cap(clients) {
				assert.NoError(t, <-clients)
			}

			require.NoError(t, ln.Close())
			select {
			case err := <-done:
				assert.ErrorIs(t, err, net.ErrClosed)
			case <-time.After(time.Minute): // a hang guard, not a measurement
				t.Fatal("Serve went on after its listener closed")
			}
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
