//go:build linux

package iouring

import (
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// opKind is the request an op submits.
type opKind uint8

const (
	kRecv opKind = iota
	kSend
	kReadFile
	kWriteFile
	kReadv
	kWritev
	kRecvFrom
	kSendTo
	kAccept
	kConnect
	kOpen
	kFsync
	kClose
)

var kindNames = [...]string{
	kRecv:      "read",
	kSend:      "write",
	kReadFile:  "read",
	kWriteFile: "write",
	kReadv:     "readv",
	kWritev:    "writev",
	kRecvFrom:  "recvmsg",
	kSendTo:    "sendmsg",
	kAccept:    "accept4",
	kConnect:   "connect",
	kOpen:      "openat",
	kFsync:     "fsync",
	kClose:     "close",
}

// op is one operation's record: what the kernel reads and writes, and the
// state shared by the future that owns it and the goroutine that reaps
// its completion.
//
// While the kernel holds the op (inFlight), the operation table holds a
// pointer to it, so the op and every buffer it references stay reachable
// for Go's collector (which never moves heap objects) until the final
// completion arrives, whatever happened to the future meanwhile.
//
// Two drivers are involved. home is the driver whose handle table holds
// rec (the descriptor's owner: it closes the descriptor and registers the
// descriptors an accept or an open returns). d is the ring the request is
// submitted to, whose operation table holds the op and whose Park reaps
// its completion. They are the same driver unless the op was first polled
// by a worker whose own driver is another io_uring Driver of this process
// (a per-core runtime has one ring per worker): then d is that worker's
// ring (see pickRing), so the request is submitted, executed inline and
// reaped on the thread that runs the task, and its completion wakes the
// task on its own worker. A descriptor number means the same file in
// every ring of the process, so only closing needs care: see fail, drop
// and Driver.Close.
//
// State (under mu):
//
//	inFlight   submitted, final completion not reaped
//	ready      a result is available to the future (res, or err forced)
//	taken      the future resolved or was dropped; nobody wants a result
//	abandoned  the kernel's eventual result belongs to nobody: the
//	           reaper cleans it up (closes an accepted or opened
//	           descriptor; anything else needs nothing)
//	stopped    Cancel asked the kernel to end it; its result is final
//
// Transitions:
//
//	arm:       inFlight = true (ready cleared); a stream read with kept
//	           results takes them instead: ready = true
//	complete:  inFlight = false; abandoned? clean up : ready = true, wake
//	take:      ready -> taken (future resolves)
//	drop:      taken = true; a stream read: inFlight? cancel, settle;
//	           its result kept (cancelsafe_linux.go)
//	           anything else: inFlight? abandoned = true, cancel
//	                                   : ready result cleaned up
//	stop:      stopped = true; inFlight? cancel (the future stays
//	           pending until the completion)
//	fail:      (a close) ready = true with the close's error;
//	           inFlight? abandoned = true, cancel : ready result cleaned up
type op struct {
	d    *Driver // the ring it is submitted to
	home *Driver // the driver that owns rec
	rec  *fileRec
	kind opKind

	// prev, next and linked are guarded by rec.mu.
	prev, next *op
	linked     bool

	mu        sync.Mutex
	inFlight  bool
	ready     bool
	taken     bool
	abandoned bool
	// stopped: Cancel asked for the op to end; its result is final,
	// whatever it is (see intFuture.Cancel).
	stopped bool
	waker   core.Waker
	res     int32
	err     error
	ud      uint64

	// started is owned by the future: the op was armed once.
	started bool

	// Memory the kernel reads or writes. The rarer parts (iovecs,
	// msghdr, socket address, path) live in x, allocated by the
	// operations that need them, so a plain read or write stays small.
	fd  int32 // for kClose: the descriptor to close
	p   []byte
	off int64
	x   *opExtra
}

// opExtra is the memory of the vectored, datagram, accept, connect and
// open requests.
type opExtra struct {
	bufs  [][]byte
	iov   []unix.Iovec
	msg   unix.Msghdr
	sa    unix.RawSockaddrAny
	salen uint32
	path  []byte
	flag  uint32
	perm  uint32
}

// prep fills e for o's request on descriptor fd.
func (o *op) prep(e *sqe, fd int32) {
	e.fd = fd
	switch o.kind {
	case kRecv:
		e.opcode, e.addr, e.len = opRecv, bufAddr(o.p), uint32(len(o.p))
	case kSend:
		e.opcode, e.addr, e.len = opSend, bufAddr(o.p), uint32(len(o.p))
		e.opFlags = unix.MSG_NOSIGNAL
	case kReadFile:
		e.opcode, e.addr, e.len, e.off = opRead, bufAddr(o.p), uint32(len(o.p)), uint64(o.off)
	case kWriteFile:
		e.opcode, e.addr, e.len, e.off = opWrite, bufAddr(o.p), uint32(len(o.p)), uint64(o.off)
	case kReadv, kWritev, kRecvFrom, kSendTo:
		if o.rec != nil && o.rec.kind == kindFile {
			// A file: readv/writev at the current position.
			e.opcode = opReadv
			if o.kind == kWritev {
				e.opcode = opWritev
			}
			e.addr, e.len, e.off = iovAddr(o.x.iov), uint32(len(o.x.iov)), ^uint64(0)
			return
		}
		// A socket: recvmsg/sendmsg, which take MSG_NOSIGNAL (a writev
		// to a reset peer would raise SIGPIPE) and a peer address.
		o.x.msg = unix.Msghdr{}
		if len(o.x.iov) > 0 {
			o.x.msg.Iov = &o.x.iov[0]
			o.x.msg.SetIovlen(len(o.x.iov))
		}
		switch o.kind {
		case kRecvFrom:
			o.x.msg.Name = (*byte)(unsafe.Pointer(&o.x.sa))
			o.x.msg.Namelen = unix.SizeofSockaddrAny
		case kSendTo:
			o.x.msg.Name = (*byte)(unsafe.Pointer(&o.x.sa))
			o.x.msg.Namelen = o.x.salen
		}
		e.opcode = opRecvmsg
		if o.kind == kWritev || o.kind == kSendTo {
			e.opcode = opSendmsg
			e.opFlags = unix.MSG_NOSIGNAL
		}
		e.addr, e.len = uint64(uintptr(unsafe.Pointer(&o.x.msg))), 1
	case kAccept:
		o.x.salen = unix.SizeofSockaddrAny
		e.opcode = opAccept
		e.addr = uint64(uintptr(unsafe.Pointer(&o.x.sa)))
		e.off = uint64(uintptr(unsafe.Pointer(&o.x.salen)))
		e.opFlags = unix.SOCK_CLOEXEC | unix.SOCK_NONBLOCK
	case kConnect:
		e.opcode = opConnect
		e.addr = uint64(uintptr(unsafe.Pointer(&o.x.sa)))
		e.off = uint64(o.x.salen)
	case kOpen:
		e.opcode, e.fd = opOpenat, unix.AT_FDCWD
		e.addr = uint64(uintptr(unsafe.Pointer(&o.x.path[0])))
		e.len, e.opFlags = o.x.perm, o.x.flag|unix.O_CLOEXEC
	case kFsync:
		e.opcode = opFsync
	case kClose:
		e.opcode, e.fd = opClose, o.fd
	}
}

func bufAddr(p []byte) uint64 {
	if len(p) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&p[0])))
}

func iovAddr(iov []unix.Iovec) uint64 {
	if len(iov) == 0 {
		return 0
	}
	return uint64(uintptr(unsafe.Pointer(&iov[0])))
}

// setBufs builds the iovec array of a vectored operation.
func (o *op) setBufs(bufs [][]byte) {
	if o.x == nil {
		o.x = &opExtra{}
	}
	o.x.bufs = bufs
	o.x.iov = o.x.iov[:0]
	for _, b := range bufs {
		if len(b) == 0 {
			continue
		}
		v := unix.Iovec{Base: &b[0]}
		v.SetLen(len(b))
		o.x.iov = append(o.x.iov, v)
	}
}

// pickRing chooses the ring o is submitted to, before its first
// submission (o is in no ring's table): the polling worker's own driver
// when that is another open io_uring Driver of this process, otherwise
// its home. A runtime with one shared driver always uses that one. An
// open (whose record is the driver's misc list, not a handle) and a
// close stay at home.
func (o *op) pickRing(cx *core.Context) {
	o.d = o.home
	if o.rec == &o.home.misc {
		return
	}
	w := cx.Worker()
	if w == nil {
		return
	}
	if local, ok := w.Driver().(*Driver); ok && local != o.home && !local.closed.Load() {
		o.d = local
	}
}

// foreign reports whether o is submitted to a ring other than its home.
func (o *op) foreign() bool { return o.d != o.home }

// arm submits o, the first time or again after a retryable result,
// registering w to be woken by its completion. A closed handle or driver
// resolves o at once with the close's error.
func (o *op) arm(w core.Waker) {
	rec := o.rec
	rec.mu.Lock()
	o.mu.Lock()
	var flush bool
	switch {
	case rec.closed:
		o.ready, o.err = true, closedErrOf(rec)
	case len(rec.kept) > 0 && o.streamRead():
		// What dropped reads received comes first, without a request.
		o.ready, o.res, o.waker = true, rec.takeKept(o), nil
	default:
		if !o.linked {
			rec.link(o)
		}
		var err error
		fd := int32(rec.fd)
		if o.kind == kClose {
			fd = o.fd
		}
		o.ready, o.waker = false, w
		if flush, err = o.d.push(o, fd); err != nil {
			o.ready, o.err = true, err
			rec.unlink(o)
		} else {
			o.inFlight = true
		}
	}
	o.mu.Unlock()
	rec.mu.Unlock()
	if flush {
		o.d.handOff()
	}
}

// complete records the final completion of o (called by the reaper) and
// returns the waker to wake, if any.
func (o *op) complete(res int32) core.Waker {
	o.mu.Lock()
	o.inFlight = false
	if o.abandoned {
		o.mu.Unlock()
		o.cleanup(res)
		return nil
	}
	o.res, o.ready = res, true
	w := o.waker
	o.waker = nil
	o.mu.Unlock()
	return w
}

// cleanup disposes of a result nobody will take: a descriptor the kernel
// made for us is closed; anything else (bytes read, written, a connect's
// outcome) needs nothing.
func (o *op) cleanup(res int32) {
	if res >= 0 && (o.kind == kAccept || o.kind == kOpen) {
		_ = unix.Close(int(res))
	}
}

// fail resolves o with err because its handle or driver closed (caller
// holds rec.mu). It returns the waker to wake, and, if the kernel still
// holds o in its home ring, its user_data for the caller to cancel there.
//
// An op in a foreign ring is cancelled here, in its own ring, and fail
// returns inFlight false so that the caller does not cancel it in the
// wrong one. The home closes the descriptor once its own ring has
// consumed every entry naming it, which says nothing of the foreign ring:
// so fail also waits until that ring has consumed everything published
// so far, o's entry and the cancel included (o.inFlight was set, under
// rec.mu, after the entry was published). This is done for a dropped op
// too (taken, still in flight): drop abandons it before it unlinks it.
func (o *op) fail(err error) (w core.Waker, ud uint64, inFlight bool) {
	w, ud, inFlight = o.failLocked(err)
	if o.foreign() && inFlight {
		if ud != 0 {
			o.d.cancel(ud)
		}
		o.d.drainSQ()
		return w, 0, false
	}
	return w, ud, inFlight
}

// failLocked is fail's state change under o.mu. For a taken op it
// reports only whether the kernel still holds it (ud 0: nothing to
// cancel; its owner did).
func (o *op) failLocked(err error) (w core.Waker, ud uint64, inFlight bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.taken {
		return nil, 0, o.inFlight && o.foreign()
	}
	if o.ready && o.err == nil {
		o.cleanup(o.res)
	}
	o.ready, o.err, o.res = true, err, 0
	w, o.waker = o.waker, nil
	if o.inFlight {
		o.abandoned = true
		return w, o.ud, true
	}
	return w, 0, false
}

// poll is the common part of every future's Poll: it arms o at the first
// poll and then reports its result once there is one: (res, nil, true),
// or (0, err, true) for a forced error, or false while pending.
func (o *op) poll(cx *core.Context) (int32, error, bool) {
	if !o.started {
		if !cx.Proceed() {
			return 0, nil, false
		}
		o.started = true
		o.pickRing(cx)
		o.arm(cx.Waker())
	}
	for {
		o.mu.Lock()
		if !o.ready {
			if o.waker != cx.Waker() {
				o.waker = cx.Waker()
			}
			o.mu.Unlock()
			return 0, nil, false
		}
		res, err := o.res, o.err
		if err == nil && o.retry(res) {
			if o.stopped {
				// Stopped before it did anything.
				res = -int32(unix.ECANCELED)
			} else {
				// Interrupted, or a transient condition: submit again.
				o.ready = false
				o.mu.Unlock()
				o.arm(cx.Waker())
				continue
			}
		}
		o.taken = true
		o.mu.Unlock()
		o.rec.mu.Lock()
		o.rec.unlink(o)
		o.rec.mu.Unlock()
		return res, err, true
	}
}

// retry reports whether a result means "submit again" rather than a
// failure: EINTR and EAGAIN; ECONNABORTED for an accept (that connection
// went away; take the next); ECANCELED for an operation nobody cancelled,
// which the kernel does when the thread that submitted it exits (Go's
// runtime may end a thread) — the driver itself only cancels abandoned
// operations, whose results never reach here.
func (o *op) retry(res int32) bool {
	switch -res {
	case int32(unix.EINTR), int32(unix.EAGAIN):
		return true
	case int32(unix.ECONNABORTED):
		return o.kind == kAccept
	case int32(unix.ECANCELED):
		return !o.d.closed.Load()
	}
	return false
}

// drop abandons o: a result it has already is cleaned up; if the kernel
// still holds it, it is cancelled and its completion cleaned up when it
// comes. A stream read is settled instead, and what it received kept for
// the next read (see dropRead). Its waker is never woken after drop
// returns.
func (o *op) drop() {
	if !o.started {
		return
	}
	o.mu.Lock()
	if o.taken {
		o.mu.Unlock()
		return
	}
	o.taken = true
	o.waker = nil
	inFlight, ud := o.inFlight, o.ud
	if o.streamRead() {
		o.mu.Unlock()
		o.dropRead(inFlight, ud)
		return
	}
	if inFlight {
		o.abandoned = true
	} else if o.ready && o.err == nil {
		o.cleanup(o.res)
	}
	o.mu.Unlock()
	if inFlight && o.foreign() {
		// Cancel in o's own ring and make that ring consume the entry
		// before o leaves the record's list: once unlinked, a close of
		// the handle no longer sees o, and its home ring's progress
		// says nothing of this ring's (see fail).
		o.rec.mu.Lock()
		o.d.cancel(ud)
		o.d.drainSQ()
		o.rec.unlink(o)
		o.rec.mu.Unlock()
		return
	}
	o.rec.mu.Lock()
	o.rec.unlink(o)
	o.rec.mu.Unlock()
	// A close is never cancelled: a cancelled close would leave the
	// descriptor open. It completes promptly anyway.
	if inFlight && o.kind != kClose && o.d.cancel(ud) {
		o.d.handOff()
	}
}

// rearm readies a resolved op for another transfer on p (see
// intFuture.Rearm).
func (o *op) rearm(p []byte) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.taken || o.inFlight || o.abandoned || o.err != nil {
		return false
	}
	o.p = p
	// Not started: the next poll picks the ring again (o is in no
	// ring's table now).
	o.started, o.taken, o.ready, o.stopped, o.res = false, false, false, false, 0
	return true
}

// stop asks the kernel to end o, which stays the future's: its
// completion, ECANCELED or what the request did before the cancel reached
// it, resolves the future and is never submitted again. It reports
// whether the future must be polled for that result; false for an op
// never submitted, which the caller may just drop.
func (o *op) stop() bool {
	if !o.started {
		return false
	}
	o.mu.Lock()
	if o.taken {
		o.mu.Unlock()
		return false
	}
	o.stopped = true
	inFlight, ud := o.inFlight, o.ud
	o.mu.Unlock()
	if inFlight && o.d.cancel(ud) {
		o.d.handOff()
	}
	return true
}

// ---------------------------------------------------------------------------
// The operation table: user_data -> op.

// opTable maps the user_data of in-flight entries to their ops (guarded
// by Driver.sqMu). user_data is
//
//	0 | generation (31 bits) | slot + 1 (32 bits)
//
// so it is never zero and never has bit 63 (the driver's own entries),
// and a cancel or completion naming a slot since reused by another
// operation does not match it.
type opTable struct {
	slots []*op
	gens  []uint32
	free  []uint32
}

func (t *opTable) insert(o *op) uint64 {
	var idx uint32
	if n := len(t.free); n > 0 {
		idx = t.free[n-1]
		t.free = t.free[:n-1]
	} else {
		idx = uint32(len(t.slots))
		t.slots = append(t.slots, nil)
		t.gens = append(t.gens, 1)
	}
	t.slots[idx] = o
	return uint64(t.gens[idx]&0x7fffffff)<<32 | uint64(idx+1)
}

// lookup returns the op of ud, and frees its slot if the completion is
// final.
func (t *opTable) lookup(ud uint64, final bool) *op {
	idx, gen := uint32(ud)-1, uint32(ud>>32)
	if uint32(ud) == 0 || int(idx) >= len(t.slots) || t.gens[idx]&0x7fffffff != gen {
		return nil
	}
	o := t.slots[idx]
	if final && o != nil {
		t.slots[idx] = nil
		t.gens[idx]++
		t.free = append(t.free, idx)
	}
	return o
}
