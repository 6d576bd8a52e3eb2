//go:build darwin || freebsd || netbsd || openbsd || linux

package readiness

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// Registry is what the operations need of a readiness driver. A driver
// implements it on an unexported type (so the methods do not become part
// of its API) and hands it to NewOps.
type Registry interface {
	// Closed reports whether the driver was closed.
	Closed() bool
	// Lookup returns h's IO, or ErrClosed for a stale handle
	// (ErrDriverClosed once the driver closed).
	Lookup(h core.Handle) (*IO, error)
	// Register registers descriptor fd, of kind and network, with the
	// readiness bits initial set. On failure the caller still owns fd.
	Register(fd int, kind Kind, network string, initial uint64) (core.Handle, *IO, error)
	// CloseHandle closes a handle Register returned, as
	// core.Driver.CloseHandle does.
	CloseHandle(h core.Handle) error
	// CloseFD closes a descriptor that was never registered (an accepted
	// connection whose registration failed).
	CloseFD(fd int)
}

// Ops implements the socket and I/O methods of core.Driver,
// core.VectoredIO and core.DatagramIO for a readiness driver, which embeds
// it: everything but Park, Unpark, CloseHandle and Close. Make it with
// NewOps.
type Ops struct {
	r       Registry
	name    string
	backlog int
}

// NewOps returns the operations of the driver r, whose errors name it as
// name ("epoll"); backlog is the listen queue's length when a Listen's
// options give none.
func NewOps(r Registry, name string, backlog int) Ops {
	return Ops{r: r, name: name, backlog: backlog}
}

// opKind is the system call an ioOp makes.
type opKind uint8

const (
	opRead opKind = iota
	opWrite
	opReadv
	opWritev
	opRecvFrom
	opSendTo
	opAccept
)

var opNames = [...]string{
	opRead:     "read",
	opWrite:    "write",
	opReadv:    "readv",
	opWritev:   "writev",
	opRecvFrom: "recvfrom",
	opSendTo:   "sendto",
	opAccept:   sockets.AcceptCall,
}

// ioOp is the future of one operation on a registered descriptor. Its
// Poll follows Tokio's poll_io loop:
//
//	loop:
//	  ev := pollReady(interest)     pending? the waiter is linked; return
//	  n, err := syscall(fd)
//	  EAGAIN? clearReadiness(ev); loop   (the tick keeps a newer event)
//	  return n, err
//
// The waiter lives in the future, so Drop unlinks it and nothing is left
// registered on the descriptor's behalf.
type ioOp struct {
	r    Registry
	io   *IO
	w    Waiter
	kind opKind
	// err is set when the operation failed before it started (a stale
	// handle); the first poll returns it.
	err  error
	done bool

	p    []byte
	bufs [][]byte
	to   unix.Sockaddr
	// from is the peer reported by recvfrom or accept4.
	from unix.Sockaddr
}

// attempt makes the system call once.
func (op *ioOp) attempt(fd int) (int, error) {
	switch op.kind {
	case opRead:
		return sysRead(fd, op.p)
	case opWrite:
		return sysWrite(fd, op.p)
	case opReadv:
		return sysReadv(fd, op.bufs)
	case opWritev:
		return sysWritev(fd, op.bufs)
	case opRecvFrom:
		n, from, err := unix.Recvfrom(fd, op.p, 0)
		op.from = from
		return n, err
	case opSendTo:
		if err := unix.Sendto(fd, op.p, 0, op.to); err != nil {
			return 0, err
		}
		return len(op.p), nil
	case opAccept:
		nfd, from, err := sockets.Accept(fd)
		op.from = from
		return nfd, err
	}
	panic("readiness: unknown operation")
}

// poll runs the readiness loop. It reports (n, nil, true) on success,
// (0, err, true) on failure, and (0, nil, false) when pending.
func (op *ioOp) poll(cx *core.Context, interest uint64) (int, error, bool) {
	if op.err != nil {
		return 0, op.err, true
	}
	if !cx.Proceed() {
		return 0, nil, false
	}
	s := op.io
	for {
		ev, err, ok := s.PollReady(cx, &op.w, interest)
		if !ok {
			return 0, nil, false
		}
		if err != nil {
			return 0, err, true
		}
		if !s.FD.Acquire() {
			return 0, s.ClosedErr(), true
		}
		n, err := op.attempt(s.FD.n)
		s.FD.Release()
		switch {
		case err == nil:
			if op.short(n) {
				// A stream read that did not fill the buffer drained the
				// socket, and a write that did not empty it filled the
				// socket's buffer: the next call would only get EAGAIN.
				// Clear now and save it (as Tokio does); the tick keeps
				// an event that arrived since.
				s.ClearReadiness(ev, drained)
			}
			return n, nil, true
		case err == unix.EAGAIN:
			s.ClearReadiness(ev, ^uint64(0))
		case err == unix.EINTR:
		case op.kind == opAccept && err == unix.ECONNABORTED:
			// The connection went away before we took it; take the next.
		default:
			return 0, os.NewSyscallError(opNames[op.kind], err), true
		}
	}
}

// short reports whether a stream transfer moved fewer bytes than asked
// for (and some), which means the socket is drained or full.
func (op *ioOp) short(n int) bool {
	if op.io.Kind != Stream || n == 0 {
		return false
	}
	switch op.kind {
	case opRead, opWrite:
		return n < len(op.p)
	case opReadv, opWritev:
		total := 0
		for _, b := range op.bufs {
			total += len(b)
		}
		return n < total
	}
	return false
}

// Drop unlinks the waiter; a dropped operation never wakes its task.
func (op *ioOp) Drop() {
	op.done = true
	if op.io != nil && op.w.Linked() {
		op.io.Remove(&op.w)
	}
}

// intOp is the future of the operations that resolve to a byte count.
type intOp struct{ ioOp }

// Poll implements core.Future.
func (op *intOp) Poll(cx *core.Context) (core.Result[int], bool) {
	if op.err == nil && op.empty() {
		return core.Result[int]{}, true
	}
	interest := InterestRead
	if op.kind == opWrite || op.kind == opWritev || op.kind == opSendTo {
		interest = InterestWrite
	}
	n, err, ok := op.poll(cx, interest)
	if !ok {
		return core.Result[int]{}, false
	}
	op.done = true
	if err != nil {
		return core.Result[int]{Err: err}, true
	}
	if n == 0 && op.io.Kind == Stream && (op.kind == opRead || op.kind == opReadv) {
		return core.Result[int]{Err: io.EOF}, true
	}
	return core.Result[int]{Value: n}, true
}

// Rearm readies a resolved Read or Write for another transfer on p, so a
// stream's poll-style loop reuses one future (and allocates nothing). It
// reports false, leaving the future alone, if the future is still pending
// or is of another kind. The handle stays the one the future was made for;
// if it was closed since, the next poll says so.
func (op *intOp) Rearm(p []byte) bool {
	if !op.done || op.err != nil || op.w.Linked() || (op.kind != opRead && op.kind != opWrite) {
		return false
	}
	op.p = p
	op.done = false
	return true
}

// empty reports a transfer of no bytes, which completes at once without a
// system call (except a datagram, where an empty message is a message).
func (op *intOp) empty() bool {
	if op.io.Kind == Datagram && op.kind != opRead && op.kind != opReadv {
		return false
	}
	switch op.kind {
	case opRead, opWrite:
		return len(op.p) == 0
	case opReadv, opWritev:
		for _, b := range op.bufs {
			if len(b) > 0 {
				return false
			}
		}
		return true
	}
	return false
}

// Read is core.Driver.Read: it reads from h into p. The future
// writes p only during Poll.
func (o *Ops) Read(h core.Handle, p []byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(o.r, h, opRead)
	op.p = p
	return op
}

// Write is core.Driver.Write: it writes p to h, and may write fewer
// than len(p) bytes.
func (o *Ops) Write(h core.Handle, p []byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(o.r, h, opWrite)
	op.p = p
	return op
}

// Readv is core.VectoredIO.Readv: it reads from h into bufs in
// order (readv(2)).
func (o *Ops) Readv(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(o.r, h, opReadv)
	op.bufs = bufs
	return op
}

// Writev is core.VectoredIO.Writev: it writes bufs to h in order
// (writev(2)), and may write fewer bytes than they hold.
func (o *Ops) Writev(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(o.r, h, opWritev)
	op.bufs = bufs
	return op
}

func (op *ioOp) init(r Registry, h core.Handle, kind opKind) {
	op.r, op.kind = r, kind
	op.io, op.err = r.Lookup(h)
}

// acceptOp is the future of Accept.
type acceptOp struct{ ioOp }

// Accept is core.Driver.Accept: it resolves to the next connection
// of listening handle h. The new
// handle starts out readable and writable (Tokio's assume-ready for accepted
// sockets): the first read usually finds the client's first bytes without
// waiting for an event, and a wrong guess costs one EAGAIN.
func (o *Ops) Accept(h core.Handle) core.Future[core.Result[core.Accepted]] {
	op := &acceptOp{}
	op.init(o.r, h, opAccept)
	return op
}

// Poll implements core.Future.
func (op *acceptOp) Poll(cx *core.Context) (core.Result[core.Accepted], bool) {
	nfd, err, ok := op.poll(cx, InterestRead)
	if !ok {
		return core.Result[core.Accepted]{}, false
	}
	op.done = true
	if err != nil {
		return core.Result[core.Accepted]{Err: err}, true
	}
	h, _, err := op.r.Register(nfd, Stream, op.io.Network, Readable|Writable)
	if err != nil {
		op.r.CloseFD(nfd)
		return core.Result[core.Accepted]{Err: err}, true
	}
	peer := core.Addr{Net: op.io.Network, Addr: sockets.String(op.from)}
	return core.Result[core.Accepted]{Value: core.Accepted{Handle: h, Peer: peer}}, true
}

// datagramOp is the future of RecvFrom.
type datagramOp struct{ ioOp }

// RecvFrom is core.DatagramIO.RecvFrom: it receives one datagram
// from h into p; a longer one is truncated (its
// rest is discarded, as recvfrom(2) does).
func (o *Ops) RecvFrom(h core.Handle, p []byte) core.Future[core.Result[core.Datagram]] {
	op := &datagramOp{}
	op.init(o.r, h, opRecvFrom)
	op.p = p
	return op
}

// Poll implements core.Future.
func (op *datagramOp) Poll(cx *core.Context) (core.Result[core.Datagram], bool) {
	n, err, ok := op.poll(cx, InterestRead)
	if !ok {
		return core.Result[core.Datagram]{}, false
	}
	op.done = true
	if err != nil {
		return core.Result[core.Datagram]{Err: err}, true
	}
	from := core.Addr{Net: op.io.Network, Addr: sockets.String(op.from)}
	return core.Result[core.Datagram]{Value: core.Datagram{N: n, From: from}}, true
}

// SendTo is core.DatagramIO.SendTo: it sends p from h as one
// datagram to the address to.
func (o *Ops) SendTo(h core.Handle, p []byte, to string) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(o.r, h, opSendTo)
	op.p = p
	if op.err == nil {
		_, op.to, op.err = sockets.Resolve(op.io.Network, to, false)
	}
	return op
}

// WithFD runs f on h's IO, with its descriptor kept open for the duration
// (so f's system calls never act on a number reused after a close). It
// fails as Lookup does for a stale handle, and with the IO's ClosedErr if
// the handle is closing.
func WithFD(r Registry, h core.Handle, f func(io *IO) error) error {
	io, err := r.Lookup(h)
	if err != nil {
		return err
	}
	if !io.FD.Acquire() {
		return io.ClosedErr()
	}
	defer io.FD.Release()
	return f(io)
}
