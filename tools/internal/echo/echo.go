// Package echo is the echo server that weft's benchmarks measure, and the
// tcp_echo_rr (W8) and tcp_stream (W9) workloads built on it, each beside
// its plain-Go counterpart. It serves weft bench and echo-bench; the echo
// server a user reads first is examples/echo, written with coroutine tasks.
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
	"errors"
	"log/slog"
	"net"
	"syscall"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
)

// DefaultBufferSize is the per-connection copy buffer of the server: 8 KiB,
// as Tokio's copy.
const DefaultBufferSize = wio.CopyBufferSize

// Serve returns a future that accepts connections on ln until ln is
// closed, and serves each on a task of its own with a copy buffer of
// bufSize bytes (DefaultBufferSize if bufSize < 1). It resolves to the
// error that ended the accept loop: one matching net.ErrClosed after
// ln.Close, which is how to stop it, or an error the loop cannot recover
// from. Dropping it stops accepting; connections being served go on.
//
// Like net/http's Server, the loop survives what a busy server meets: an
// accept that fails for a passing reason (out of descriptors, EMFILE or
// ENFILE; out of memory; a connection aborted before it was accepted) is
// logged and retried after a pause that starts at 5 ms and doubles up to
// 1 s, so the server recovers once connections close. A listener whose
// handle was lost without ln.Close (an out-of-process driver that crashed
// and was restarted) is opened again on the same address, with the same
// pauses until that succeeds. Logging goes to slog.Default.
func Serve(ln *wnet.TCPListener, bufSize int) core.Future[error] {
	if bufSize < 1 {
		bufSize = DefaultBufferSize
	}
	return &server{ln: ln, bufSize: bufSize}
}

// The pauses between retries of a failed accept, as net/http's.
const (
	firstRetryDelay = 5 * time.Millisecond
	maxRetryDelay   = time.Second
)

// server is the accept loop.
type server struct {
	ln      *wnet.TCPListener
	bufSize int
	accept  core.Future[core.Result[*wnet.TCPStream]]
	// pause is the sleep before the next retry; delay its length, zero
	// after a successful accept.
	pause *timing.SleepFuture
	delay time.Duration
	// relisten: the pause ends with listening again on ln's address.
	relisten bool
}

func (s *server) Poll(cx *core.Context) (error, bool) {
	for {
		if s.pause != nil {
			if _, ok := s.pause.Poll(cx); !ok {
				return nil, false
			}
			s.pause = nil
			if s.relisten {
				if err := s.listenAgain(cx); err != nil {
					s.retryAfter("listening again failed", err)
					continue
				}
			}
		}
		if s.accept == nil {
			s.accept = s.ln.Accept()
		}
		r, ok := s.accept.Poll(cx)
		if !ok {
			return nil, false
		}
		s.accept = nil
		switch {
		case r.Err == nil:
			s.delay = 0
			// Nobody joins a connection task; drop the handle's interest
			// so the task's result is released when it ends.
			core.Drop(core.Spawn(cx, Conn(r.Value, s.bufSize)))
		case errors.Is(r.Err, net.ErrClosed) && !s.ln.IsClosed():
			// The handle went away under the listener: listen again.
			s.relisten = true
			s.retryAfter("the listener was lost", r.Err)
		case temporary(r.Err):
			s.retryAfter("accept failed", r.Err)
		default:
			return r.Err, true
		}
	}
}

// retryAfter logs why the loop pauses and arms the next, longer pause.
func (s *server) retryAfter(what string, err error) {
	s.delay = min(max(2*s.delay, firstRetryDelay), maxRetryDelay)
	slog.Warn("echo: "+what+"; retrying", "addr", s.ln.Addr(), "err", err, "in", s.delay)
	s.pause = timing.Sleep(s.delay)
}

// listenAgain replaces a lost listener with a new one on its address.
func (s *server) listenAgain(cx *core.Context) error {
	addr := s.ln.Addr().String()
	s.ln.Close() // the lost handle; its error says nothing new
	ln, err := wnet.ListenConfig{ReuseAddr: true}.ListenTCP(cx, "tcp", addr)
	if err != nil {
		return err
	}
	s.ln, s.relisten = ln, false
	slog.Info("echo: listening again", "addr", addr)
	return nil
}

// temporary reports whether an accept error passes with time: the
// process or the system is out of descriptors or memory, or a connection
// failed between its handshake and the accept.
func temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EPROTO, syscall.EPERM} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

func (s *server) Drop() {
	if s.accept != nil {
		core.Drop(s.accept)
		s.accept = nil
	}
	if s.pause != nil {
		s.pause.Drop()
		s.pause = nil
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
