// Package echo is an echo server on weft, and the tcp_echo_rr (W8) and
// tcp_stream (W9) benchmark workloads built on it, each beside its plain-Go
// counterpart.
//
// # The server
//
// [Serve] accepts connections on a listener and spawns one task per
// connection, which copies what it reads back to the peer
// (io.CopyBuffer(conn, conn, buf)) until the peer shuts down its write
// side, then closes the connection. It is written as plain poll-based
// futures: the accept loop and the connection task are small state
// machines, and all waiting happens in the futures of packages net and io.
//
//	r, _ := weft.NewBuilder().Scheduler("currentthread").Driver("epoll").Build()
//	ln, _ := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
//		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:7")
//	})
//	err, _ := rt.BlockOn(r, echo.Serve(ln, echo.DefaultBufferSize))
//
// # The workloads
//
// [RunW8] and [RunW9] run the workloads of the project's BENCHMARKS.md
// against a server of either implementation ([Weft] or [Go]), each in a
// child process of its own so that the server's CPU time is exactly what
// that process's getrusage reports, with no client work mixed in. The load
// comes from the parent, always from the same plain-Go client, so the two
// runs differ only in the server. The child is the running executable
// itself: a program (or test binary) that runs the workloads must call
// [ServeChildIfRequested] first thing in main (or TestMain).
package echo

import (
	"github.com/weftrt/weft/core"
	wio "github.com/weftrt/weft/core/io"
	wnet "github.com/weftrt/weft/core/net"
)

// DefaultBufferSize is the per-connection copy buffer of the server: 8 KiB,
// as Tokio's copy.
const DefaultBufferSize = wio.CopyBufferSize

// Serve returns a future that accepts connections on ln until accepting
// fails (net.ErrClosed once ln is closed, which is how to stop it), and
// serves each on a task of its own with a copy buffer of bufSize bytes
// (DefaultBufferSize if bufSize < 1). It resolves to the error that ended
// the accept loop. Dropping it stops accepting; connections being served
// go on.
func Serve(ln *wnet.TCPListener, bufSize int) core.Future[error] {
	if bufSize < 1 {
		bufSize = DefaultBufferSize
	}
	return &server{ln: ln, bufSize: bufSize}
}

// server is the accept loop.
type server struct {
	ln      *wnet.TCPListener
	bufSize int
	accept  core.Future[core.Result[*wnet.TCPStream]]
}

func (s *server) Poll(cx *core.Context) (error, bool) {
	for {
		if s.accept == nil {
			s.accept = s.ln.Accept()
		}
		r, ok := s.accept.Poll(cx)
		if !ok {
			return nil, false
		}
		s.accept = nil
		if r.Err != nil {
			return r.Err, true
		}
		// Nobody joins a connection task; drop the handle's interest so
		// the task's result is released when it ends.
		core.Drop(core.Spawn(cx, Conn(r.Value, s.bufSize)))
	}
}

func (s *server) Drop() {
	if s.accept != nil {
		core.Drop(s.accept)
		s.accept = nil
	}
}

// Conn returns the future of one echo connection: it copies s back to
// itself through a buffer of bufSize bytes until the peer shuts down its
// write side (or an error), then closes s. It resolves to the number of
// bytes echoed. Dropping it closes s.
func Conn(s *wnet.TCPStream, bufSize int) core.Future[core.Result[int64]] {
	return &conn{s: s, copy: wio.CopyBuffer(s, s, make([]byte, max(bufSize, 1)))}
}

type conn struct {
	s    *wnet.TCPStream
	copy core.Future[core.Result[int64]]
}

func (c *conn) Poll(cx *core.Context) (core.Result[int64], bool) {
	r, ok := c.copy.Poll(cx)
	if !ok {
		return r, false
	}
	c.copy = nil
	if err := c.s.Close(); r.Err == nil && err != nil {
		r.Err = err
	}
	return r, true
}

func (c *conn) Drop() {
	if c.copy != nil {
		core.Drop(c.copy)
		c.copy = nil
		c.s.Close()
	}
}
