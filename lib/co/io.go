package co

import (
	"errors"
	"io"
	"net"
	"os"
	gosync "sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wsync"
)

// Reader returns an io.Reader that reads from r on c's task: each Read
// awaits one read of r. The reader has an operation of its own (a
// wio.Op), which it re-arms from one Read to the next when r's futures
// allow, so a read loop allocates nothing, and so that several tasks can
// each read r through a Reader of their own. It must be used only by c's
// body.
func Reader(c *Ctx, r wio.Reader) io.Reader {
	return &reader{c: c, op: wio.ReadOp(r)}
}

// Writer returns an io.Writer that writes to w on c's task. A Write
// returns once all of p is written or an error occurred, as io.Writer
// requires. When w is a wio.WriteLocker (weft's streams are), each Write
// holds w's write lock throughout, so the Writes of Writers and Conns on
// one stream, from any number of tasks, each go out contiguously. It must
// be used only by c's body.
func Writer(c *Ctx, w wio.Writer) io.Writer {
	a := &writer{c: c, op: wio.WriteOp(w)}
	a.turn.init(w)
	return a
}

type reader struct {
	c  *Ctx
	op wio.Op
}

func (a *reader) Read(p []byte) (int, error) {
	return transfer(a.c, "Read", p, &a.op, nil)
}

type writer struct {
	c    *Ctx
	op   wio.Op
	turn writeTurn
}

func (a *writer) Write(p []byte) (int, error) {
	return writeAll(a.c, "Write", p, &a.op, &a.turn, nil)
}

// writeTurn is a whole-buffer writer's place in the turns of a stream's
// writers: the stream's write lock, if it has one, and the future that
// waits for it.
type writeTurn struct {
	mu   *wsync.Mutex
	wait wsync.LockFuture
}

func (t *writeTurn) init(w wio.Writer) {
	if l, ok := w.(wio.WriteLocker); ok {
		t.mu = l.WriteLock()
	}
}

// take waits for the lock, unless the stream has none. With a deadline it
// gives up once the deadline passes, and returns errTimeout.
func (t *writeTurn) take(c *Ctx, op string, dl *deadline) error {
	if t.mu == nil || t.mu.TryLock() {
		return nil
	}
	f := t.mu.LockInto(&t.wait)
	_, err := await(c, op, dl, func(cx *core.Context) bool {
		_, ok := f.Poll(cx)
		return ok
	}, func() bool { f.Drop(); return false }, f.Drop)
	return err
}

// give hands the lock on, to the next writer in line.
func (t *writeTurn) give(c *Ctx) {
	if t.mu != nil {
		t.mu.UnlockFrom(c.cx)
	}
}

// writeAll writes all of p with one operation after another, holding the
// stream's write lock throughout, so no other whole-buffer writer's bytes
// come between the first and the last of p. The lock is released however
// the write ends, including when the body unwinds.
func writeAll(c *Ctx, op string, p []byte, o *wio.Op, turn *writeTurn, dl *deadline) (int, error) {
	c.running(op)
	if len(p) == 0 {
		return 0, nil
	}
	if err := turn.take(c, op, dl); err != nil {
		return 0, err
	}
	defer turn.give(c)
	total := 0
	for total < len(p) {
		n, err := transfer(c, op, p[total:], o, dl)
		total += n
		if err != nil {
			return total, err
		}
		if n == 0 {
			return total, io.ErrShortWrite
		}
	}
	return total, nil
}

// errTimeout is what an operation past its deadline returns before Conn
// wraps it: os.ErrDeadlineExceeded, which reports Timeout() true.
var errTimeout = os.ErrDeadlineExceeded

// transfer runs one read or write of p on c's task with the caller's
// operation o; see await for the deadline. At the deadline o is stopped
// (wio.Op.Stop): dropped, except a write whose Drop would lose count of
// the bytes it wrote (a write on a completion driver, see wio.Canceller),
// which is cancelled and waited for. Such a write returns what it wrote
// before the cancel reached it, with errTimeout if that was nothing; a
// writeAll around it then stops at the deadline with that count.
func transfer(c *Ctx, op string, p []byte, o *wio.Op, dl *deadline) (int, error) {
	c.running(op)
	if len(p) == 0 {
		return 0, nil
	}
	var (
		n   int
		err error
	)
	stopped, werr := await(c, op, dl, func(cx *core.Context) bool {
		var done bool
		n, err, done = o.Poll(cx, p)
		return done
	}, o.Stop, o.Cancel)
	if werr != nil {
		return 0, werr
	}
	if stopped && err != nil && wio.Cancelled(err) {
		return n, errTimeout
	}
	return n, err
}

// await calls step on c's task until it reports done, suspending the body
// in between (step arranges the wake, as a future's Poll does). With a
// deadline dl it also watches dl, which another goroutine may move while
// the body waits. Once the deadline has passed it calls stop: if stop
// reports false it has abandoned the step, and await returns errTimeout;
// if true the step was asked to end and is to be run to its end, and await
// steps on, no longer watching dl, and reports stopped once step is done.
// If the task is dropped while waiting, cancel is called and the body
// unwinds.
func await(c *Ctx, op string, dl *deadline, step func(cx *core.Context) bool, stop func() bool, cancel func()) (stopped bool, err error) {
	cx := c.running(op)
	var w deadlineWatch
	defer w.stop()
	for {
		if dl != nil && !stopped {
			if expired := w.update(cx, dl); expired {
				if stopped = stop(); !stopped {
					return false, errTimeout
				}
			}
		}
		if step(cx) {
			return stopped, nil
		}
		if dl != nil && !stopped {
			if w.poll(cx) {
				if stopped = stop(); !stopped {
					return false, errTimeout
				}
				continue
			}
			// Deadline moves by another goroutine wake this task; a
			// move between the check above and this registration is
			// caught by the re-check.
			dl.register(cx.Waker())
			if dl.gen.Load() != w.gen {
				continue
			}
		}
		if !c.suspend() {
			cancel()
			panic(errUnwind)
		}
		cx = c.cx
	}
}

// deadline is one direction's deadline of a Conn. It may be set from any
// goroutine; the body waiting in that direction is woken to re-read it.
type deadline struct {
	at  atomic.Int64 // UnixNano of the deadline; 0 for none
	gen atomic.Uint64
	mu  gosync.Mutex
	wk  core.Waker // the waiting task's waker, guarded by mu
}

func (d *deadline) set(t time.Time) {
	var ns int64
	if !t.IsZero() {
		ns = t.UnixNano()
		if ns == 0 {
			ns = 1
		}
	}
	d.at.Store(ns)
	d.gen.Add(1)
	d.mu.Lock()
	wk := d.wk
	d.wk = nil
	d.mu.Unlock()
	if wk != nil {
		wk.Wake()
	}
}

func (d *deadline) register(wk core.Waker) {
	d.mu.Lock()
	d.wk = wk
	d.mu.Unlock()
}

// deadlineWatch is the timer one operation keeps for its deadline.
type deadlineWatch struct {
	gen   uint64
	seen  bool
	sleep *timing.SleepFuture
}

// update re-reads dl if it moved and re-arms the sleep; it reports true
// when the deadline has passed.
func (w *deadlineWatch) update(cx *core.Context, dl *deadline) (expired bool) {
	g := dl.gen.Load()
	if w.seen && g == w.gen {
		return false
	}
	w.seen, w.gen = true, g
	at := dl.at.Load()
	if at == 0 {
		w.stop()
		return false
	}
	left := time.Until(time.Unix(0, at))
	if left <= 0 {
		w.stop()
		return true
	}
	t := runtimeTimer(cx)
	if t == nil {
		// No timer: a future deadline cannot be enforced.
		w.stop()
		return false
	}
	when := t.Clock.Now().Add(left)
	if w.sleep == nil {
		w.sleep = timing.SleepUntil(when)
	} else {
		w.sleep.Reset(when)
	}
	return false
}

// poll polls the deadline's sleep; true when it has fired.
func (w *deadlineWatch) poll(cx *core.Context) bool {
	if w.sleep == nil {
		return false
	}
	_, fired := w.sleep.Poll(cx)
	if fired {
		w.sleep = nil
	}
	return fired
}

func (w *deadlineWatch) stop() {
	if w.sleep != nil {
		w.sleep.Drop()
		w.sleep = nil
	}
}

// runtimeTimer returns the runtime's time when it has a clock and a timer.
func runtimeTimer(cx *core.Context) *core.Time {
	wk := cx.Worker()
	if wk == nil {
		return nil
	}
	t := wk.Time()
	if t == nil || t.Clock == nil || t.Timer == nil {
		return nil
	}
	return t
}

// Stream is what [Conn] adapts: a weft stream (lib/wnet's TCPStream and
// UnixStream, lib/wio's DuplexStream). Optional methods are used when the
// stream has them: LocalAddr and RemoteAddr (net.Addr), CloseWrite and
// CloseRead (error), and WriteLock (wio.WriteLocker), which makes Writes
// take turns.
type Stream interface {
	wio.Reader
	wio.Writer
	Close() error
}

// StreamConn is a net.Conn on a weft stream, for use by one coroutine
// task's body; see [Conn].
type StreamConn struct {
	c      *Ctx
	s      Stream
	rd, wr wio.Op
	turn   writeTurn
	rdl    deadline
	wdl    deadline
}

var _ net.Conn = (*StreamConn)(nil)

// Conn returns a net.Conn on s for c's body: Read and Write await the
// stream's operations on c's task. Read and Write must be called from c's
// body only; Close, the deadline setters and the address getters may be
// called from anywhere. Moving a deadline wakes a body waiting on it, and
// closing the stream fails its pending operations.
//
// To use one stream from several tasks, as Go programs share a net.Conn
// between goroutines, give each task a Conn of its own on it: each Conn
// has its own read and write operations (re-armed from one call to the
// next, so a loop allocates nothing), so any number of tasks may read and
// write at once. Reads wait side by side, and each byte read goes to
// exactly one of them. Writes take turns when the stream is a
// wio.WriteLocker (weft's streams are): a Write holds the stream's write
// lock until all of p is written, so the bytes of one Write are never
// interleaved with another Conn's (or Writer's) Write, and concurrent
// Writes are carried whole, one after another, as a Go net.Conn's are.
// Write futures used directly on the same stream do not take the turn.
//
// Deadlines follow net.Conn: an operation past its deadline fails with an
// error matching os.ErrDeadlineExceeded (a *net.OpError whose Timeout
// reports true); a Write waiting for its turn fails so too, having written
// nothing. They are enforced with the runtime's timer; without one only
// deadlines that have already passed are.
func Conn(c *Ctx, s Stream) *StreamConn {
	sc := &StreamConn{c: c, s: s, rd: wio.ReadOp(s), wr: wio.WriteOp(s)}
	sc.turn.init(s)
	return sc
}

// Read implements io.Reader.
func (sc *StreamConn) Read(p []byte) (int, error) {
	n, err := transfer(sc.c, "Conn.Read", p, &sc.rd, &sc.rdl)
	if err != nil && err != io.EOF {
		err = sc.opError("read", err)
	}
	return n, err
}

// Write implements io.Writer: it returns once all of p is written, or
// with an error. It holds the stream's write lock throughout (see Conn).
func (sc *StreamConn) Write(p []byte) (int, error) {
	n, err := writeAll(sc.c, "Conn.Write", p, &sc.wr, &sc.turn, &sc.wdl)
	if err != nil {
		err = sc.opError("write", err)
	}
	return n, err
}

// opError wraps a timeout the way package net does; the stream's own
// errors (already *net.OpError for lib/wnet) pass unchanged.
func (sc *StreamConn) opError(op string, err error) error {
	if err != errTimeout {
		return err
	}
	oe := &net.OpError{Op: op, Net: "weft", Source: sc.LocalAddr(), Addr: sc.RemoteAddr(), Err: err}
	if oe.Source != nil {
		oe.Net = oe.Source.Network()
	}
	return oe
}

// Close closes the stream. Pending operations fail.
func (sc *StreamConn) Close() error { return sc.s.Close() }

// CloseWrite shuts down the writing side when the stream supports it (a
// TCP half close); crypto/tls uses it in CloseWrite.
func (sc *StreamConn) CloseWrite() error {
	if cw, ok := sc.s.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// CloseRead shuts down the reading side when the stream supports it.
func (sc *StreamConn) CloseRead() error {
	if cr, ok := sc.s.(interface{ CloseRead() error }); ok {
		return cr.CloseRead()
	}
	return errors.ErrUnsupported
}

// LocalAddr returns the stream's local address, or a placeholder address
// of network "weft" when the stream has none.
func (sc *StreamConn) LocalAddr() net.Addr {
	if a, ok := sc.s.(interface{ LocalAddr() net.Addr }); ok {
		if v := a.LocalAddr(); v != nil {
			return v
		}
	}
	return noAddr{}
}

// RemoteAddr returns the stream's remote address, or a placeholder.
func (sc *StreamConn) RemoteAddr() net.Addr {
	if a, ok := sc.s.(interface{ RemoteAddr() net.Addr }); ok {
		if v := a.RemoteAddr(); v != nil {
			return v
		}
	}
	return noAddr{}
}

// SetDeadline sets the read and write deadlines.
func (sc *StreamConn) SetDeadline(t time.Time) error {
	sc.rdl.set(t)
	sc.wdl.set(t)
	return nil
}

// SetReadDeadline sets the deadline of current and future Reads; the zero
// time removes it.
func (sc *StreamConn) SetReadDeadline(t time.Time) error { sc.rdl.set(t); return nil }

// SetWriteDeadline sets the deadline of current and future Writes; the
// zero time removes it. A Write that times out may have written part of
// its buffer, and returns how much with the timeout, as net.Conn's Write
// does: on a completion driver (io_uring) a write in the kernel's hands
// at the deadline is cancelled and waited for, not abandoned (see
// weft/lib/wio.Canceller).
func (sc *StreamConn) SetWriteDeadline(t time.Time) error { sc.wdl.set(t); return nil }

// Stream returns the stream the Conn reads and writes.
func (sc *StreamConn) Stream() Stream { return sc.s }

// noAddr stands for the address of a stream that has none (an in-memory
// duplex).
type noAddr struct{}

func (noAddr) Network() string { return "weft" }
func (noAddr) String() string  { return "weft" }
