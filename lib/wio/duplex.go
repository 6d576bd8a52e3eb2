package wio

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync"
)

// Duplex returns the two ends of an in-memory, bidirectional byte stream
// (Tokio's io::duplex), for tests of code written against Reader and
// Writer. What one end writes the other reads. Each direction buffers at
// most maxBuf bytes (at least 1); a write to a full direction waits for the
// reader, so backpressure behaves as on a socket.
//
// Ends behave like TCP sockets: CloseWrite is a half close (the other end
// reads io.EOF once it has read what was written); Close closes both
// directions, after which the other end's writes fail with an error
// matching syscall.EPIPE and io.ErrClosedPipe, and this end's own
// operations, pending or later, fail with net.ErrClosed. Any number of
// reads and writes may be pending on an end at once.
func Duplex(maxBuf int) (*DuplexStream, *DuplexStream) {
	maxBuf = max(maxBuf, 1)
	ab := &pipe{max: maxBuf}
	ba := &pipe{max: maxBuf}
	return &DuplexStream{rd: ba, wr: ab}, &DuplexStream{rd: ab, wr: ba}
}

// ErrBrokenPipe is the error of a write to a Duplex end whose peer was
// closed. It matches syscall.EPIPE and io.ErrClosedPipe under errors.Is.
var ErrBrokenPipe error = brokenPipe{}

type brokenPipe struct{}

func (brokenPipe) Error() string { return "weft/io: write to a closed duplex stream: broken pipe" }

func (brokenPipe) Is(target error) bool {
	return target == syscall.EPIPE || target == io.ErrClosedPipe
}

// DuplexStream is one end of a Duplex pair. It implements ReadWriter,
// CloseWriter and WriteLocker.
type DuplexStream struct {
	rd, wr *pipe
	closed atomic.Bool
	wlock  wsync.Mutex
}

// Read reads what the other end wrote; see Reader.
func (s *DuplexStream) Read(p []byte) core.Future[core.Result[int]] {
	return &pipeOp{s: s, p: p}
}

// Write writes for the other end to read; see Writer. It waits while this
// direction's buffer is full.
func (s *DuplexStream) Write(p []byte) core.Future[core.Result[int]] {
	return &pipeOp{s: s, p: p, write: true}
}

// WriteLock returns the lock of this end's writers; see WriteLocker.
func (s *DuplexStream) WriteLock() *wsync.Mutex { return &s.wlock }

// CloseWrite ends this direction: the other end reads io.EOF after the
// buffered bytes. Writes fail afterwards.
func (s *DuplexStream) CloseWrite() error {
	if s.closed.Load() {
		return net.ErrClosed
	}
	s.wr.close(func(p *pipe) { p.writeClosed = true })
	return nil
}

// Close closes both directions and wakes every operation pending on this
// end. Calling it again returns net.ErrClosed.
func (s *DuplexStream) Close() error {
	if s.closed.Swap(true) {
		return net.ErrClosed
	}
	s.wr.close(func(p *pipe) { p.writeClosed = true })
	s.rd.close(func(p *pipe) { p.readClosed = true; p.buf = nil })
	return nil
}

// pipe is one direction of a Duplex.
type pipe struct {
	max int

	// mu guards everything below and the links of every waiter in the
	// lists.
	mu          sync.Mutex
	buf         []byte
	writeClosed bool // the writing end shut down: reads see EOF when empty
	readClosed  bool // the reading end closed: writes fail
	readers     waitList
	writers     waitList
}

func (p *pipe) close(mark func(*pipe)) {
	p.mu.Lock()
	mark(p)
	var wake []core.Waker
	wake = p.readers.takeAll(wake)
	wake = p.writers.takeAll(wake)
	p.mu.Unlock()
	for _, w := range wake {
		w.Wake()
	}
}

// pipeOp is a pending Read or Write on a DuplexStream.
type pipeOp struct {
	s     *DuplexStream
	p     []byte
	write bool
	w     listWaiter
}

func (op *pipeOp) Poll(cx *core.Context) (core.Result[int], bool) {
	if len(op.p) == 0 {
		return core.Result[int]{}, true
	}
	if !cx.Proceed() {
		return core.Result[int]{}, false
	}
	if op.s.closed.Load() {
		op.unlink()
		return core.Result[int]{Err: net.ErrClosed}, true
	}
	if op.write {
		return op.pollWrite(cx)
	}
	return op.pollRead(cx)
}

func (op *pipeOp) pollRead(cx *core.Context) (core.Result[int], bool) {
	p := op.s.rd
	p.mu.Lock()
	switch {
	case len(p.buf) > 0:
		n := copy(op.p, p.buf)
		p.buf = p.buf[n:]
		if len(p.buf) == 0 {
			p.buf = p.buf[:0:0] // let the consumed array go
		}
		p.readers.remove(&op.w)
		wake := p.writers.takeAll(nil)
		p.mu.Unlock()
		wakeAll(wake)
		return core.Result[int]{Value: n}, true
	case p.readClosed:
		p.readers.remove(&op.w)
		p.mu.Unlock()
		return core.Result[int]{Err: net.ErrClosed}, true
	case p.writeClosed:
		p.readers.remove(&op.w)
		p.mu.Unlock()
		return core.Result[int]{Err: io.EOF}, true
	}
	p.readers.add(&op.w, cx.Waker())
	p.mu.Unlock()
	return core.Result[int]{}, false
}

func (op *pipeOp) pollWrite(cx *core.Context) (core.Result[int], bool) {
	p := op.s.wr
	p.mu.Lock()
	switch {
	case p.writeClosed:
		p.writers.remove(&op.w)
		p.mu.Unlock()
		return core.Result[int]{Err: errWriteAfterCloseWrite}, true
	case p.readClosed:
		p.writers.remove(&op.w)
		p.mu.Unlock()
		return core.Result[int]{Err: ErrBrokenPipe}, true
	case len(p.buf) < p.max:
		n := min(len(op.p), p.max-len(p.buf))
		p.buf = append(p.buf, op.p[:n]...)
		p.writers.remove(&op.w)
		wake := p.readers.takeAll(nil)
		p.mu.Unlock()
		wakeAll(wake)
		return core.Result[int]{Value: n}, true
	}
	p.writers.add(&op.w, cx.Waker())
	p.mu.Unlock()
	return core.Result[int]{}, false
}

// errWriteAfterCloseWrite is the error of a write after CloseWrite: the
// same as a socket's, EPIPE.
var errWriteAfterCloseWrite = ErrBrokenPipe

func wakeAll(ws []core.Waker) {
	for _, w := range ws {
		w.Wake()
	}
}

// unlink removes the op's waiter from whichever list holds it.
func (op *pipeOp) unlink() {
	for _, p := range []*pipe{op.s.rd, op.s.wr} {
		p.mu.Lock()
		p.readers.remove(&op.w)
		p.writers.remove(&op.w)
		p.mu.Unlock()
	}
}

// Drop removes the op's waiter: a dropped read or write never wakes its
// task.
func (op *pipeOp) Drop() { op.unlink() }

// waitList is an intrusive list of waiters, guarded by its owner's mutex.
type waitList struct {
	head, tail *listWaiter
	n          int
}

// listWaiter is a node of a waitList, embedded in the future that waits.
type listWaiter struct {
	prev, next *listWaiter
	list       *waitList
	waker      core.Waker
}

// add links w (if it is not linked already) and sets its waker.
func (l *waitList) add(w *listWaiter, waker core.Waker) {
	w.waker = waker
	if w.list == l {
		return
	}
	w.prev, w.next, w.list = l.tail, nil, l
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
	l.n++
}

// remove unlinks w if it is in l.
func (l *waitList) remove(w *listWaiter) {
	if w.list != l {
		return
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	w.prev, w.next, w.list, w.waker = nil, nil, nil, nil
	l.n--
}

// takeAll unlinks every waiter and appends its waker to buf.
func (l *waitList) takeAll(buf []core.Waker) []core.Waker {
	for w := l.head; w != nil; {
		next := w.next
		if w.waker != nil {
			buf = append(buf, w.waker)
		}
		w.prev, w.next, w.list, w.waker = nil, nil, nil, nil
		w = next
	}
	l.head, l.tail, l.n = nil, nil, 0
	return buf
}
