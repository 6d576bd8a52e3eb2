// Package echo is an echo server on weft, written the way a server on Go's
// net is: straight-line code in coroutine tasks (package co), one task per
// connection, the standard io.Copy moving the bytes.
//
//	r, _ := weft.New()
//	ln, _ := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
//		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:7007")
//	})
//	err := co.Run(r, func(c *co.Ctx) error { return echo.Serve(c, ln) })
//
// Command weft-echo (cmd/weft-echo) runs it. The server weft's benchmarks
// measure (W8 and W9, run by weft bench) is written as poll-driven futures
// and lives with the benchmark tool, in tools/internal/echo.
package echo

import (
	"io"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wnet"
)

// Serve accepts connections on ln until ln is closed, and echoes each on a
// coroutine task of its own: the connection gets back what it sends until
// it shuts down its write side, then the server closes it. Serve returns
// the error that ended the accept loop, one matching net.ErrClosed after
// ln.Close. It runs in a coroutine task (c); the connection tasks go to the
// worker running it, and a work-stealing scheduler spreads them from there.
func Serve(c *co.Ctx, ln *wnet.TCPListener) error {
	for {
		s, err := co.AwaitResult(c, ln.Accept())
		if err != nil {
			return err
		}
		// Nobody waits for a connection task: drop its handle so its
		// result is released when it ends.
		core.Drop(co.Go(c, func(c *co.Ctx) error { return echoConn(c, s) }))
	}
}

// echoConn copies s back to itself until the peer's write side ends, then
// closes s.
func echoConn(c *co.Ctx, s *wnet.TCPStream) error {
	conn := co.Conn(c, s)
	defer conn.Close()
	_, err := io.Copy(conn, conn)
	return err
}
