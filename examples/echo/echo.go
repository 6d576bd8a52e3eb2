// Package echo is an echo server on weft with a graceful stop, written the
// way a server on Go's net is: straight-line code in coroutine tasks
// (package co), one task per connection, io.Copy moving the bytes.
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
//	defer stop()
//	err := weft.Run(func(c *weft.Ctx) error {
//		ln, err := wnet.ListenTCP(c.Context(), "tcp", "127.0.0.1:7007")
//		if err != nil {
//			return err
//		}
//		return echo.Serve(c, ctx, ln, 5*time.Second)
//	})
//
// Command weft-echo (cmd/weft-echo) runs it. The server weft's benchmarks
// measure (W8 and W9, run by weft bench) is written as poll-driven futures
// and lives with the benchmark tool, in tools/internal/echo.
package echo

import (
	"context"
	"io"
	"sync"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/tasks"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/lib/wnet"
)

// Serve echoes every connection accepted on ln, each on a coroutine task
// of its own, until ctx is done or ln fails. Then it stops: it closes ln,
// gives the open connections up to grace to finish, closes those still
// open, and returns once every connection task has ended. It returns nil
// after a stop by ctx, and the accept error otherwise.
func Serve(c *co.Ctx, ctx context.Context, ln *wnet.TCPListener, grace time.Duration) error {
	// Closing the listener is what ends the accept loop: a pending Accept
	// resolves with net.ErrClosed.
	stopAccepting := context.AfterFunc(ctx, func() { ln.Close() })
	defer stopAccepting()

	var open sync.Map // *wnet.TCPStream -> struct{}: connections not yet done
	conns := tasks.NewTaskTracker()
	var acceptErr error
	for {
		s, err := co.AwaitResult(c, ln.Accept())
		if err != nil {
			if ctx.Err() == nil {
				acceptErr = err
				ln.Close()
			}
			break
		}
		open.Store(s, struct{}{})
		// Nobody joins a connection task: the tracker counts it and its
		// handle is dropped so its result is released when it ends.
		core.Drop(tasks.Spawn(conns, c, co.Future(func(c *co.Ctx) error {
			defer open.Delete(s)
			return echoConn(c, s)
		})))
	}

	conns.Close()
	if _, err := co.AwaitResult(c, timing.Timeout(conns.Wait(), grace)); err != nil {
		// The grace period is over: close what is left; each read or
		// write pending on it ends with net.ErrClosed, and its task too.
		open.Range(func(s, _ any) bool { s.(*wnet.TCPStream).Close(); return true })
		co.Await(c, conns.Wait())
	}
	return acceptErr
}

// echoConn copies s back to itself until the peer's write side ends, then
// closes s.
func echoConn(c *co.Ctx, s *wnet.TCPStream) error {
	conn := co.Conn(c, s)
	defer conn.Close()
	_, err := io.Copy(conn, conn)
	return err
}
