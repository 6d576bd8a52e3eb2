//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

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
	opAccept:   "accept",
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
	d    *Driver
	io   *scheduledIO
	w    waiter
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
		return unix.Read(fd, op.p)
	case opWrite:
		return unix.Write(fd, op.p)
	case opReadv:
		// recvmsg/sendmsg with several buffers are readv/writev on a
		// socket, and golang.org/x/sys has them on every system (it has
		// readv/writev only on some).
		n, _, _, _, err := unix.RecvmsgBuffers(fd, op.bufs, nil, 0)
		return n, err
	case opWritev:
		return unix.SendmsgBuffers(fd, op.bufs, nil, nil, 0)
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
		nfd, from, err := sysAccept(fd)
		op.from = from
		return nfd, err
	}
	panic("kqueue: unknown operation")
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
		ev, err, ok := s.pollReady(cx, &op.w, interest)
		if !ok {
			return 0, nil, false
		}
		if err != nil {
			return 0, err, true
		}
		if !s.fd.acquire() {
			return 0, s.closedErr(), true
		}
		n, err := op.attempt(s.fd.n)
		s.fd.release()
		switch {
		case err == nil:
			if op.short(n) {
				// A stream read that did not fill the buffer drained the
				// socket, and a write that did not empty it filled the
				// socket's buffer: the next call would only get EAGAIN.
				// Clear now and save it (as Tokio does); the tick keeps
				// an event that arrived since.
				s.clearReadiness(ev, drained)
			}
			return n, nil, true
		case err == unix.EAGAIN:
			s.clearReadiness(ev, ^uint64(0))
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
	if op.io.kind != kindStream || n == 0 {
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
	if op.io != nil && op.w.linked.Load() {
		op.io.remove(&op.w)
	}
}

// intOp is the future of the operations that resolve to a byte count.
type intOp struct{ ioOp }

// Poll implements core.Future.
func (op *intOp) Poll(cx *core.Context) (core.Result[int], bool) {
	if op.err == nil && op.empty() {
		return core.Result[int]{}, true
	}
	interest := interestRead
	if op.kind == opWrite || op.kind == opWritev || op.kind == opSendTo {
		interest = interestWrite
	}
	n, err, ok := op.poll(cx, interest)
	if !ok {
		return core.Result[int]{}, false
	}
	op.done = true
	if err != nil {
		return core.Result[int]{Err: err}, true
	}
	if n == 0 && op.io.kind == kindStream && (op.kind == opRead || op.kind == opReadv) {
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
	if !op.done || op.err != nil || op.w.linked.Load() || (op.kind != opRead && op.kind != opWrite) {
		return false
	}
	op.p = p
	op.done = false
	return true
}

// empty reports a transfer of no bytes, which completes at once without a
// system call (except a datagram, where an empty message is a message).
func (op *intOp) empty() bool {
	if op.io.kind == kindDatagram && op.kind != opRead && op.kind != opReadv {
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

// Read reads into p. The driver writes p only during Poll.
func (d *Driver) Read(h core.Handle, p []byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(d, h, opRead)
	op.p = p
	return op
}

// Write writes from p; it may write fewer than len(p) bytes.
func (d *Driver) Write(h core.Handle, p []byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(d, h, opWrite)
	op.p = p
	return op
}

// Readv reads into bufs in order (readv(2)).
func (d *Driver) Readv(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(d, h, opReadv)
	op.bufs = bufs
	return op
}

// Writev writes bufs in order (writev(2)); it may write fewer bytes than
// they hold.
func (d *Driver) Writev(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(d, h, opWritev)
	op.bufs = bufs
	return op
}

func (op *ioOp) init(d *Driver, h core.Handle, kind opKind) {
	op.d, op.kind = d, kind
	op.io, op.err = d.lookup(h)
}

// acceptOp is the future of Accept.
type acceptOp struct{ ioOp }

// Accept resolves to the next connection of a listening handle. The new
// handle starts out readable and writable (Tokio's assume-ready for accepted
// sockets): the first read usually finds the client's first bytes without
// waiting for an event, and a wrong guess costs one EAGAIN.
func (d *Driver) Accept(h core.Handle) core.Future[core.Result[core.Accepted]] {
	op := &acceptOp{}
	op.init(d, h, opAccept)
	return op
}

// Poll implements core.Future.
func (op *acceptOp) Poll(cx *core.Context) (core.Result[core.Accepted], bool) {
	nfd, err, ok := op.poll(cx, interestRead)
	if !ok {
		return core.Result[core.Accepted]{}, false
	}
	op.done = true
	if err != nil {
		return core.Result[core.Accepted]{Err: err}, true
	}
	h, _, err := op.d.register(nfd, kindStream, op.io.network, readable|writable)
	if err != nil {
		op.d.closeFn(nfd)
		return core.Result[core.Accepted]{Err: err}, true
	}
	peer := core.Addr{Net: op.io.network, Addr: sockaddrString(op.from)}
	return core.Result[core.Accepted]{Value: core.Accepted{Handle: h, Peer: peer}}, true
}

// datagramOp is the future of RecvFrom.
type datagramOp struct{ ioOp }

// RecvFrom receives one datagram into p; a longer one is truncated (its
// rest is discarded, as recvfrom(2) does).
func (d *Driver) RecvFrom(h core.Handle, p []byte) core.Future[core.Result[core.Datagram]] {
	op := &datagramOp{}
	op.init(d, h, opRecvFrom)
	op.p = p
	return op
}

// Poll implements core.Future.
func (op *datagramOp) Poll(cx *core.Context) (core.Result[core.Datagram], bool) {
	n, err, ok := op.poll(cx, interestRead)
	if !ok {
		return core.Result[core.Datagram]{}, false
	}
	op.done = true
	if err != nil {
		return core.Result[core.Datagram]{Err: err}, true
	}
	from := core.Addr{Net: op.io.network, Addr: sockaddrString(op.from)}
	return core.Result[core.Datagram]{Value: core.Datagram{N: n, From: from}}, true
}

// SendTo sends p as one datagram to the address to.
func (d *Driver) SendTo(h core.Handle, p []byte, to string) core.Future[core.Result[int]] {
	op := &intOp{}
	op.init(d, h, opSendTo)
	op.p = p
	if op.err == nil {
		_, op.to, op.err = resolve(op.io.network, to, false)
	}
	return op
}
