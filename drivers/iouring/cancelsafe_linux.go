//go:build linux

package iouring

import (
	"errors"

	"golang.org/x/sys/unix"
)

// Cancel safety of stream reads (see "Cancellation" in the package
// documentation). A recv the kernel completed took its bytes off the
// socket; if its future was dropped meanwhile, those bytes belong to the
// next read on the stream. So dropping a stream read settles it: the
// request is cancelled and the Drop waits until its final completion is
// reaped, which is also the last moment the kernel writes the caller's
// buffer; whatever it received is copied from that buffer, still
// untouched by the caller, into the handle's kept results, and the next
// read takes them before anything is submitted.

// keptResult is one result a stream read received for a reader that had
// abandoned it: bytes (data non-nil), or a failure (res, a negative
// errno) that came after them.
type keptResult struct {
	data []byte
	res  int32
}

// streamRead reports whether o reads a byte stream (recv, or recvmsg into
// several buffers, on a stream socket): the operations whose results a
// Drop keeps.
func (o *op) streamRead() bool {
	return (o.kind == kRecv || o.kind == kReadv) && o.rec.kind == kindStream
}

// room returns how many bytes o's buffers hold.
func (o *op) room() int {
	if o.kind == kRecv {
		return len(o.p)
	}
	n := 0
	for _, b := range o.x.bufs {
		n += len(b)
	}
	return n
}

// received returns a copy of the first n bytes o's buffers received.
func (o *op) received(n int) []byte {
	out := make([]byte, n)
	if o.kind == kRecv {
		copy(out, o.p[:n])
		return out
	}
	off := 0
	for _, b := range o.x.bufs {
		if off == n {
			break
		}
		off += copy(out[off:], b)
	}
	return out
}

// fill copies src into o's buffers from byte off of them on and returns
// how many bytes it copied.
func (o *op) fill(off int, src []byte) int {
	if o.kind == kRecv {
		return copy(o.p[off:], src)
	}
	n := 0
	for _, b := range o.x.bufs {
		if off >= len(b) {
			off -= len(b)
			continue
		}
		n += copy(b[off:], src[n:])
		off = 0
		if n == len(src) {
			break
		}
	}
	return n
}

// transient reports a result that consumed nothing from the socket: the
// request is merely to be submitted again, or was cancelled.
func transient(res int32) bool {
	switch -res {
	case int32(unix.EINTR), int32(unix.EAGAIN), int32(unix.ECANCELED):
		return true
	}
	return false
}

// keep records res, the final result of the abandoned stream read o (its
// bytes are still in o's buffers), for the next read (caller holds r.mu).
// It reports whether anything was kept: not an end of stream (a recv
// reports it again), nor a transient result, nor anything on a closed
// handle.
func (r *fileRec) keep(o *op, res int32) bool {
	switch {
	case r.closed:
		return false
	case res > 0:
		r.kept = append(r.kept, keptResult{data: o.received(int(res))})
	case res < 0 && !transient(res):
		r.kept = append(r.kept, keptResult{res: res})
	default:
		return false
	}
	return true
}

// takeKept resolves the stream read o from the kept results, oldest
// first, and returns its result (caller holds r.mu; r.kept is not empty).
// A read takes as many kept bytes as its buffers hold, up to a kept
// failure, which the read after the bytes gets. On a Unix seqpacket
// socket each kept result is one message: a read takes one, truncated to
// its buffers as a recv would.
func (r *fileRec) takeKept(o *op) int32 {
	if k := r.kept[0]; k.data == nil {
		r.popKept()
		return k.res
	}
	packet := r.network == "unixpacket"
	n, room := 0, o.room()
	for len(r.kept) > 0 && n < room {
		k := &r.kept[0]
		if k.data == nil {
			break
		}
		c := o.fill(n, k.data)
		n += c
		k.data = k.data[c:]
		if len(k.data) == 0 || packet {
			r.popKept()
		}
		if packet {
			break
		}
	}
	return int32(n)
}

func (r *fileRec) popKept() {
	r.kept[0] = keptResult{}
	r.kept = r.kept[1:]
	if len(r.kept) == 0 {
		r.kept = nil
	}
}

// cancelReads cancels the other stream reads the kernel holds on r (caller
// holds r.mu), because results were just kept: a read waiting in the
// kernel for more bytes must not wait while bytes that came before it are
// kept. Each ends with ECANCELED, which its future takes as "submit
// again" (see op.retry), and arm then resolves it from the kept results.
func (r *fileRec) cancelReads(except *op) {
	for o := r.head; o != nil; o = o.next {
		if o == except || !o.streamRead() {
			continue
		}
		o.mu.Lock()
		ud, held := o.ud, !o.taken && o.inFlight && !o.abandoned
		o.mu.Unlock()
		if held && o.d.cancel(ud) {
			o.d.handOff()
		}
	}
}

// dropRead drops a stream read, which drop has marked taken (not
// abandoned), without losing what it read: if the kernel holds it, it is
// settled first; then a result it received is kept for the next read.
func (o *op) dropRead(inFlight bool, ud uint64) {
	if inFlight {
		o.d.settle(o, ud)
	}
	o.mu.Lock()
	settled := !o.inFlight
	if !settled {
		// The ring closed with the request still in the kernel (see
		// Close): nobody reaps it now.
		o.abandoned = true
	}
	res, ok := o.res, settled && o.ready && o.err == nil
	o.mu.Unlock()
	rec := o.rec
	rec.mu.Lock()
	rec.unlink(o)
	if ok && rec.keep(o, res) {
		rec.cancelReads(o)
	}
	rec.mu.Unlock()
}

// settle cancels the in-flight operation o, taken by its dropper, and
// returns once its final completion has been reaped, or once the ring is
// gone. The cancel of a request waiting for socket readiness completes
// at once, so this is a short wait; the kernel's write of the bytes the
// request received, if it beat the cancel, happens before its completion
// is posted.
//
// Whoever holds parkMu reaps. If settle can take parkMu it waits in the
// kernel itself (settleWait) until o's completion is reaped. If it cannot,
// a Park (or another settle) holds it: one blocked in the kernel is woken
// by the cancel's own completion, and o's completion resolves o through
// its waker, here a settleWaker; but a Park may also end before o's
// completion is posted, and its worker may not park again for a while.
// So every holder of parkMu, releasing it, wakes the settles waiting
// (releasePark), which then try again. A settle reads the wake-up channel
// before it tries parkMu, and the holder closes it after releasing
// parkMu, so a release between the two is never missed.
//
// Parking takes parkMu too, so a Drop must never run inside a Park of
// the same driver: wakers only queue tasks, and no driver call is made
// from one.
func (d *Driver) settle(o *op, ud uint64) {
	done := make(settleWaker)
	o.mu.Lock()
	inFlight := o.inFlight
	if inFlight {
		o.waker = done
	}
	o.mu.Unlock()
	if !inFlight {
		return
	}
	if d.cancel(ud) {
		d.handOff()
	}
	d.settlers.Add(1)
	defer d.settlers.Add(-1)
	for {
		d.settleMu.Lock()
		released := d.parkReleased
		d.settleMu.Unlock()
		if d.parkMu.TryLock() {
			o.mu.Lock()
			inFlight := o.inFlight
			o.mu.Unlock()
			ok := inFlight && d.settleWait()
			d.releasePark()
			if !ok {
				return
			}
			continue
		}
		select {
		case <-done:
			return
		case <-released:
		}
	}
}

// settleWaker is the waker of an operation being settled: its completion
// closes the channel.
type settleWaker chan struct{}

// Wake implements core.Waker; an operation's waker is woken at most once.
func (w settleWaker) Wake() { close(w) }

// releasePark unlocks parkMu and, if settles wait, wakes them to try to
// take it (see settle).
func (d *Driver) releasePark() {
	d.parkMu.Unlock()
	if d.settlers.Load() == 0 {
		return
	}
	d.settleMu.Lock()
	close(d.parkReleased)
	d.parkReleased = make(chan struct{})
	d.settleMu.Unlock()
}

// settleWait submits what is queued, waits in the kernel for at least one
// completion and reaps (caller holds parkMu). It reports false once the
// ring is gone. While it waits it looks to submitters and Unpark like a
// blocked Park (parkWaiting): entries published meanwhile are submitted
// by their submitter, and an Unpark's NOP ends the wait. It does not
// consume an Unpark's wakeFlag, which belongs to the next Park, and it
// reaps with the state idle, so that an Unpark meanwhile sets wakeFlag
// for that Park rather than being skipped as if a Park were about to
// return.
func (d *Driver) settleWait() bool {
	d.sqMu.Lock()
	if d.sqDead {
		d.sqMu.Unlock()
		return false
	}
	n := d.r.pending()
	d.state.Store(parkWaiting)
	d.sqMu.Unlock()
	var err error
	if d.cqReady() {
		err = d.r.submit(n)
	} else {
		flags := uint32(enterGetEvents)
		if d.r.needsWakeup() {
			flags |= enterSQWakeup
		}
		_, err = sysEnter(d.r.fd, n, 1, flags, nil, 0)
		err = enterErr(err)
	}
	d.state.Store(parkIdle)
	d.reap()
	// EBUSY: completions wait in the overflow list, which reap brought
	// in. Any other failure is the ring's own; settle gives up.
	return err == nil || errors.Is(err, unix.EBUSY)
}
