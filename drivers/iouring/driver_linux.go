//go:build linux

package iouring

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/activity"
	"github.com/weftrt/weft/drivers/internal/slab"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// Park states, for the submission path and Unpark (see the package
// documentation).
const (
	parkIdle uint32 = iota
	parkWaiting
	parkDispatching
)

// Reserved user_data values of the driver's own entries. Operation
// entries have bit 63 clear (see opTable).
const (
	udInternal uint64 = 1 << 63
	udWake            = udInternal | 1 // the NOP of Unpark
	udCancel          = udInternal | 2 // an IORING_OP_ASYNC_CANCEL
	udTimeout         = udInternal | 3 // Park's IORING_OP_TIMEOUT (no EXT_ARG)
)

// requiredOps are the operations the driver uses. A kernel without one of
// them (older than 5.6) is treated as having no usable io_uring.
var requiredOps = []uint8{opNop, opReadv, opWritev, opFsync, opSendmsg, opRecvmsg, opTimeout, opAccept,
	opAsyncCancel, opConnect, opOpenat, opClose, opRead, opWrite, opSend, opRecv}

// Driver is the io_uring driver. Create it with New; it implements
// core.Driver, core.VectoredIO, core.DatagramIO and core.FileIO. Every
// method may be called from any goroutine; Park calls are serialised.
type Driver struct {
	r *ring

	// ringMu keeps the ring's descriptor open for the io_uring_enter
	// calls made outside sqMu and parkMu (a submitter's flush): they
	// hold it for reading; Close takes it for writing to tear the ring
	// down, so no enter ever reaches a closed, or reused, descriptor
	// number. Lock order: ringMu, then sqMu.
	ringMu sync.RWMutex

	// sqMu guards the submission side: the SQ ring, the operation table
	// and the two flags below it.
	sqMu  sync.Mutex
	table opTable
	// sqClosing refuses new operations (Close has begun); internal
	// entries (cancels) are still accepted.
	sqClosing bool
	// sqDead: the ring is unmapped; nothing may touch it.
	sqDead bool

	// settlers counts the Drops waiting for an operation's final
	// completion (see settle); parkReleased, guarded by settleMu, is
	// closed and replaced when a holder of parkMu releases it while any
	// wait.
	settlers     atomic.Int32
	settleMu     sync.Mutex
	parkReleased chan struct{}

	// parkMu serialises Park and Close; the fields below it belong to
	// whoever holds it. It is released with releasePark.
	parkMu sync.Mutex
	batch  []cqe
	// reapedOther counts the completions reaped other than Park's own
	// TIMEOUT entries (see Park).
	reapedOther uint64
	waited      bool
	batchOps    []*op
	wakers      []core.Waker
	lastGosched time.Time
	waitArg     getEventsArg
	waitTS      kernelTimespec

	// state says whether a Park is blocked in io_uring_enter (waiting) or
	// dispatching what it reaped. Submitters and Unpark read it.
	state atomic.Uint32
	// wakeFlag records an Unpark for the next Park (see Unpark).
	wakeFlag atomic.Bool
	// nopInFlight: an Unpark's NOP is submitted and not yet reaped; it
	// will end whichever Park is waiting, so further Unparks need not
	// submit another.
	nopInFlight atomic.Bool
	// inflight counts operation entries whose final CQE has not arrived,
	// and is the driver's core.QuiescentDriver state: with none, a Park
	// can end only through Unpark or its timeout.
	inflight activity.Counter
	// cancelHit and cancelMiss count the outcomes of async cancels: the
	// request was found and cancelled, or it had completed already
	// (ENOENT) or could not be stopped (EALREADY) and its completion is
	// cleaned up when it arrives. Tests read them to prove which side of
	// a race they exercised.
	cancelHit, cancelMiss atomic.Uint64
	closed                atomic.Bool

	handles *slab.Slab[fileRec, *fileRec]
	// misc holds the operations that have no handle yet (OpenFile), so
	// Close finds them.
	misc fileRec

	extArg  bool // IORING_FEAT_EXT_ARG: Park bounds a wait without a TIMEOUT entry
	backlog int
}

// New sets up a ring with o and probes it. The error wraps ErrUnavailable
// when the kernel refuses io_uring (ENOSYS, EPERM from seccomp or
// kernel.io_uring_disabled, a kernel too old for the operations the
// driver needs), naming the cause.
func New(o Options) (*Driver, error) {
	if o.Entries == 0 {
		o.Entries = DefaultEntries
	}
	if o.Entries < 1 || o.Entries&(o.Entries-1) != 0 || o.Entries > maxEntries {
		return nil, fmt.Errorf("iouring: entries must be a power of two between 1 and %d, got %d", maxEntries, o.Entries)
	}
	r, err := newRing(ringOptions{entries: uint32(o.Entries), sqpoll: o.SQPoll, sqpollIdle: o.SQPollIdle})
	if err != nil {
		return nil, unavailable(err)
	}
	ops, err := probeOps(r.fd)
	if err != nil {
		r.close()
		return nil, unavailable(err)
	}
	var have opSet
	have.fill(ops)
	for _, code := range requiredOps {
		if !have[code] {
			r.close()
			return nil, fmt.Errorf("%w: the kernel (%s) lacks IORING_OP_%s (Linux 5.6 or later is needed)", ErrUnavailable, kernelRelease(), opName(code))
		}
	}
	d := &Driver{
		r:       r,
		handles: slab.New[fileRec](),
		extArg:  r.has(featExtArg) && !forceNoExtArg.Load(),
		backlog: sockets.ListenBacklog(),

		parkReleased: make(chan struct{}),
	}
	d.misc.fd = -1
	return d, nil
}

// maxEntries is the kernel's largest SQ (IORING_MAX_ENTRIES).
const maxEntries = 32768

// forceNoExtArg makes New ignore IORING_FEAT_EXT_ARG, so tests exercise
// Park's IORING_OP_TIMEOUT path on a kernel that has EXT_ARG.
var forceNoExtArg atomic.Bool

// ---------------------------------------------------------------------------
// Submission.

// push writes o's entry into the SQ and publishes it (caller holds rec.mu
// of o's record and o.mu; push takes sqMu). A full SQ is flushed and
// waited on, never dropped. It reports whether the caller must submit
// (flush) after releasing its locks, which is when a Park is blocked in
// the kernel: that Park's io_uring_enter took its count of entries before
// this one was published, so it will not submit it.
func (d *Driver) push(o *op, fd int32) (flush bool, err error) {
	d.sqMu.Lock()
	defer d.sqMu.Unlock()
	if d.sqClosing {
		return false, errDriverClosed
	}
	e, err := d.entry()
	if err != nil {
		return false, err
	}
	o.ud = d.table.insert(o)
	o.prep(e, fd)
	e.userData = o.ud
	d.r.publish()
	d.inflight.Add()
	if o.rec != nil && d == o.home {
		// Positions are per ring: a foreign ring's entries are made
		// consumed before the home closes the descriptor by fail and
		// drop instead.
		o.rec.lastPos = d.r.tail
	}
	return d.shouldFlush(), nil
}

// entry returns a free SQE, flushing the SQ to make room (caller holds
// sqMu).
func (d *Driver) entry() (*sqe, error) {
	for {
		if e := d.r.next(); e != nil {
			return e, nil
		}
		if err := d.r.makeRoom(); err != nil {
			return nil, err
		}
	}
}

// shouldFlush reports whether a submitter must make its entries reach the
// kernel itself (caller holds sqMu): under SQPOLL when the polling thread
// sleeps, otherwise when a Park is blocked in the kernel. Park sets
// parkWaiting under sqMu after counting its entries, so an entry
// published before that is counted by the Park, and one published after
// sees parkWaiting here.
func (d *Driver) shouldFlush() bool {
	if d.r.sqpoll {
		return d.r.needsWakeup()
	}
	return d.state.Load() == parkWaiting
}

// handOff makes sure entries a submitter published while a Park is
// blocked in the kernel get submitted (see shouldFlush): it submits them
// on the parker's behalf (under SQPOLL, wakes the kernel thread if it
// sleeps). That costs the submitter one io_uring_enter per operation
// while another worker sleeps in the driver. The alternative, ending the
// blocked Park with a NOP as Unpark does and leaving later entries to the
// next Park's enter, saves those calls but delays the entries until a
// worker parks again; measured on W10's shape (4 KiB reads, 64 in flight,
// two workers) it did 3.5x worse (7.5 us against 2.1 us a read), and no
// better on an echo round trip.
func (d *Driver) handOff() {
	_ = d.flush()
}

// flush submits every published entry now.
func (d *Driver) flush() error {
	d.ringMu.RLock()
	defer d.ringMu.RUnlock()
	d.sqMu.Lock()
	if d.sqDead {
		d.sqMu.Unlock()
		return nil
	}
	n := d.r.pending()
	d.sqMu.Unlock()
	return d.r.submit(n)
}

// pushInternal queues one of the driver's own entries (a cancel or an
// Unpark's NOP) and reports whether the caller must flush. It works while
// Close is cancelling, but not once the ring is gone.
func (d *Driver) pushInternal(fill func(e *sqe)) (flush bool) {
	d.sqMu.Lock()
	defer d.sqMu.Unlock()
	if d.sqDead {
		return false
	}
	e, err := d.entry()
	if err != nil {
		return false
	}
	fill(e)
	d.r.publish()
	return d.shouldFlush()
}

// cancel queues an IORING_OP_ASYNC_CANCEL of the entry ud. Its own
// completion is ignored: whether the cancel found the operation
// (-ENOENT: it completed already; -EALREADY: it is running and will
// complete) the operation's CQE still arrives and is cleaned up. A stale
// ud never matches another operation, the generation in it having moved
// on when its slot was reused.
func (d *Driver) cancel(ud uint64) bool {
	return d.pushInternal(func(e *sqe) {
		e.opcode = opAsyncCancel
		e.fd = -1
		e.addr = ud
		e.userData = udCancel
	})
}

// waitConsumed makes sure the kernel has read every SQ entry up to pos,
// so that a descriptor named by one of them can be closed: until an
// entry is consumed it holds only a descriptor number, which a close
// would let the kernel reuse for the next socket or file.
func (d *Driver) waitConsumed(pos uint32) {
	d.ringMu.RLock()
	defer d.ringMu.RUnlock()
	for tries := 0; ; tries++ {
		d.sqMu.Lock()
		if d.sqDead {
			d.sqMu.Unlock()
			return
		}
		n := d.r.pending()
		done := int32(atomic.LoadUint32(d.r.sqHead)-pos) >= 0
		d.sqMu.Unlock()
		if done {
			return
		}
		if d.r.sqpoll {
			_, _ = sysEnter(d.r.fd, 0, 0, enterSQWakeup, nil, 0)
		} else {
			_ = d.r.submit(n)
		}
		if tries > 0 {
			runtime.Gosched()
		}
	}
}

// drainSQ waits until the kernel has consumed every entry published to
// the SQ so far (see waitConsumed). A closing home driver uses it on the
// ring of an operation submitted to another ring.
func (d *Driver) drainSQ() {
	d.sqMu.Lock()
	dead, pos := d.sqDead, d.r.tail
	d.sqMu.Unlock()
	if !dead {
		d.waitConsumed(pos)
	}
}

// ---------------------------------------------------------------------------
// Parking and completions.

// Park submits what is queued, waits at most timeout for a completion
// (negative: until one arrives or Unpark; zero: not at all) and resolves
// every completed operation, waking its task. One io_uring_enter both
// submits and waits. A bounded wait that ends with nothing reaped and
// before its time (a signal interrupted io_uring_enter, or, without
// EXT_ARG, the TIMEOUT entry's count was met early) waits again for what
// is left, so a worker parked until a deadline wakes at the deadline.
func (d *Driver) Park(timeout time.Duration) error {
	d.parkMu.Lock()
	defer d.releasePark()
	if d.closed.Load() {
		return errDriverClosed
	}
	if timeout != 0 {
		d.refreshSchedTick()
	}
	if timeout <= 0 {
		return d.park(timeout)
	}
	// A signal delivered to this thread ends io_uring_enter with EINTR
	// (Go's preemption signal, SIGURG, reaches threads blocked in system
	// calls too). Without EXT_ARG the bound is a TIMEOUT entry counting
	// one other completion, and the kernel's count can be met by earlier
	// timeouts' bookkeeping, ending the wait early with nothing reaped but
	// the entry itself. Either way nothing the caller waits for happened:
	// wait again for what is left. An Unpark reaps its NOP (or stops the
	// round from waiting at all), so it still ends Park.
	deadline := time.Now().Add(timeout)
	for {
		before := d.reapedOther
		err := d.park(timeout)
		timeout = time.Until(deadline)
		if err != nil || !d.waited || d.reapedOther != before || timeout <= 0 || d.closed.Load() {
			return err
		}
	}
}

// park is one submit-and-wait of Park, with parkMu held.
func (d *Driver) park(timeout time.Duration) error {
	wait := timeout != 0
	d.sqMu.Lock()
	n := d.r.pending()
	if wait {
		d.state.Store(parkWaiting)
	}
	d.sqMu.Unlock()
	// Pairs with Unpark: Unpark stores wakeFlag then loads state; Park
	// stores state then swaps wakeFlag. One of the two sees the other.
	if wait && (d.wakeFlag.Swap(false) || d.cqReady()) {
		wait = false
	}
	// waited tells Park's loop that this round slept in the kernel; a
	// round that did not (an Unpark came first) must end Park.
	d.waited = wait
	var err error
	switch {
	case wait:
		err = d.enterWait(n, timeout)
	case d.r.sqpoll || n > 0:
		err = d.r.submit(n)
	}
	d.state.Store(parkDispatching)
	d.reap()
	d.state.Store(parkIdle)
	return err
}

// cqReady reports whether completions are waiting to be reaped.
func (d *Driver) cqReady() bool {
	head, tail := d.r.completions()
	return head != tail || d.r.overflowed()
}

// enterWait submits n entries and waits for one completion, at most
// timeout (negative: no bound). With IORING_FEAT_EXT_ARG (5.11+) the
// bound is passed to io_uring_enter; without it a TIMEOUT entry with a
// completion count of one is queued first, which completes either when
// the time passes or when any other completion arrives, so it never
// lingers past the wait it bounds.
func (d *Driver) enterWait(n uint32, timeout time.Duration) error {
	flags := uint32(enterGetEvents)
	if d.r.needsWakeup() {
		flags |= enterSQWakeup
	}
	var arg unsafe.Pointer
	var argSize uintptr
	if timeout > 0 {
		d.waitTS = kernelTimespec{sec: int64(timeout / time.Second), nsec: int64(timeout % time.Second)}
		if d.extArg {
			d.waitArg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&d.waitTS)))}
			flags |= enterExtArg
			arg, argSize = unsafe.Pointer(&d.waitArg), unsafe.Sizeof(d.waitArg)
		} else {
			// The kernel copies the timespec when it reads the entry,
			// which happens inside the io_uring_enter below.
			d.pushInternal(func(e *sqe) {
				e.opcode = opTimeout
				e.fd = -1
				e.addr = uint64(uintptr(unsafe.Pointer(&d.waitTS)))
				e.len = 1
				e.off = 1 // complete after one other completion
				e.userData = udTimeout
			})
			d.sqMu.Lock()
			n = d.r.pending()
			d.sqMu.Unlock()
		}
	}
	_, err := sysEnter(d.r.fd, n, 1, flags, arg, argSize)
	runtime.KeepAlive(&d.waitTS)
	if err != nil && (errors.Is(err, unix.ETIME) || errors.Is(err, unix.EBUSY)) {
		err = nil // the time passed; or completions overflowed, reaped next
	}
	return enterErr(err)
}

// reap drains the CQ in batches and resolves the operations (caller holds
// parkMu). The entries are copied out and the CQ head released first, so
// the kernel can post more while the batch is dispatched; the operation
// table is consulted under one sqMu section per batch.
func (d *Driver) reap() {
	for {
		head, tail := d.r.completions()
		if head == tail {
			if !d.r.overflowed() {
				return
			}
			// Completions wait in the kernel's overflow list; an enter
			// with GETEVENTS moves them into the ring.
			_, _ = sysEnter(d.r.fd, 0, 0, enterGetEvents, nil, 0)
			if head, tail = d.r.completions(); head == tail {
				return
			}
		}
		for ; head != tail; head++ {
			d.batch = append(d.batch, *d.r.cqeAt(head))
		}
		d.r.consumed(head)
		d.dispatch()
	}
}

// dispatch resolves the batch of CQEs.
func (d *Driver) dispatch() {
	d.sqMu.Lock()
	for i := range d.batch {
		c := &d.batch[i]
		if c.userData != udTimeout {
			d.reapedOther++
		}
		var o *op
		switch {
		case c.userData == udWake:
			d.nopInFlight.Store(false)
		case c.userData == udCancel:
			if c.res >= 0 {
				d.cancelHit.Add(1)
			} else {
				d.cancelMiss.Add(1)
			}
		case c.userData&udInternal != 0:
			// A park timeout's own completion.
		default:
			o = d.table.lookup(c.userData, c.flags&cqeFMore == 0)
		}
		d.batchOps = append(d.batchOps, o)
	}
	d.sqMu.Unlock()
	for i, o := range d.batchOps {
		if o == nil {
			continue
		}
		c := &d.batch[i]
		if c.flags&cqeFMore == 0 {
			d.inflight.Done()
		}
		if w := o.complete(c.res); w != nil {
			d.wakers = append(d.wakers, w)
		}
		d.batchOps[i] = nil
	}
	d.batch = d.batch[:0]
	d.batchOps = d.batchOps[:0]
	for i, w := range d.wakers {
		w.Wake()
		d.wakers[i] = nil
	}
	d.wakers = d.wakers[:0]
}

// refreshSchedTick passes through Go's scheduler if the parking goroutine
// has not for schedTickRefresh, for the reason the epoll driver gives: Go's
// sysmon takes the P of a goroutine blocked in a system call once it has
// run 10 ms without being rescheduled, and a worker's loop never returns
// to Go's scheduler on its own.
func (d *Driver) refreshSchedTick() {
	now := time.Now()
	if now.Sub(d.lastGosched) < schedTickRefresh {
		return
	}
	d.lastGosched = now
	runtime.Gosched()
}

const schedTickRefresh = 8 * time.Millisecond

// Unpark makes the current or next Park return promptly. It is free while
// no Park is blocked (a flag makes the next Park poll instead of wait) or
// while a Park is dispatching (it is about to return, and its caller
// re-checks the queues the unparker published to first). When a Park is
// blocked in the kernel it submits an IORING_OP_NOP, whose completion
// ends the wait; one NOP at a time, so a burst of Unparks costs one
// io_uring_enter.
func (d *Driver) Unpark() {
	if d.closed.Load() {
		return
	}
	d.kick()
}

func (d *Driver) kick() {
	if d.state.Load() == parkDispatching {
		return
	}
	d.wakeFlag.Store(true)
	if d.state.Load() != parkWaiting || d.nopInFlight.Swap(true) {
		return
	}
	d.pushInternal(func(e *sqe) {
		e.opcode = opNop
		e.fd = -1
		e.userData = udWake
	})
	_ = d.flush()
}

// Close fails every pending operation with an error matching
// core.ErrDriverClosed and net.ErrClosed, cancels what the kernel still
// runs and waits (a bounded time) for those completions, so no buffer is
// released while the kernel may write it, closes every descriptor the
// driver issued, and tears the ring down. It waits for a Park in progress.
// Calling it again does nothing.
func (d *Driver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.kick()
	d.parkMu.Lock()
	defer d.releasePark()
	d.sqMu.Lock()
	d.sqClosing = true
	d.sqMu.Unlock()
	for _, rec := range d.handles.CloseAll() {
		d.closeRec(rec, errDriverClosed, true)
	}
	d.closeRec(&d.misc, errDriverClosed, false)
	d.failForeign()
	_ = d.flush()
	// Wait for the cancelled operations' completions. Socket operations
	// waiting for readiness are cancelled at once; a file operation
	// running in a kernel worker finishes first.
	deadline := time.Now().Add(closeDrainLimit)
	for !d.inflight.Quiescent() && time.Now().Before(deadline) {
		d.waitTS = kernelTimespec{nsec: int64(10 * time.Millisecond)}
		if d.extArg {
			d.waitArg = getEventsArg{ts: uint64(uintptr(unsafe.Pointer(&d.waitTS)))}
			_, _ = sysEnter(d.r.fd, 0, 1, enterGetEvents|enterExtArg, unsafe.Pointer(&d.waitArg), unsafe.Sizeof(d.waitArg))
		} else {
			time.Sleep(time.Millisecond)
		}
		d.reap()
	}
	d.ringMu.Lock()
	defer d.ringMu.Unlock()
	d.sqMu.Lock()
	defer d.sqMu.Unlock()
	d.sqDead = true
	if !d.inflight.Quiescent() {
		// The kernel still holds operations (a file read stuck in a
		// kernel worker): keep their records, and so their buffers,
		// reachable for good rather than let the collector reuse memory
		// the kernel may still write.
		strandedMu.Lock()
		stranded = append(stranded, d.table.slots...)
		strandedMu.Unlock()
	}
	d.r.close()
	return nil
}

// failForeign fails the operations other drivers' handles submitted to
// this ring (see op.pickRing), which no closeRec of this driver reaches,
// and cancels them. Close calls it after setting sqClosing, so the table
// gains no operation meanwhile, and holding parkMu, so none is reaped.
func (d *Driver) failForeign() {
	d.sqMu.Lock()
	var ops []*op
	for _, o := range d.table.slots {
		if o != nil && o.foreign() {
			ops = append(ops, o)
		}
	}
	d.sqMu.Unlock()
	for _, o := range ops {
		rec := o.rec
		rec.mu.Lock()
		rec.unlink(o)
		// failLocked, not fail: the cancel goes to this ring, here.
		w, ud, _ := o.failLocked(errDriverClosed)
		if ud != 0 {
			d.cancel(ud)
		}
		rec.mu.Unlock()
		if w != nil {
			w.Wake()
		}
	}
}

// closeDrainLimit bounds Close's wait for cancelled operations.
const closeDrainLimit = 5 * time.Second

var (
	strandedMu sync.Mutex
	stranded   []*op
)

// Handles returns the number of open handles. Tests use it to check that
// nothing stays registered.
func (d *Driver) Handles() int { return d.handles.Len() }

// InFlight returns the number of operations the kernel holds (submitted,
// final completion not reaped), cancelled ones included.
func (d *Driver) InFlight() int { return d.inflight.Len() }

// Quiescent reports whether no operation is in flight
// (core.QuiescentDriver).
func (d *Driver) Quiescent() bool { return d.inflight.Quiescent() }

// OnActive sets the function called when an operation is queued while
// none was in flight (core.QuiescentDriver). It runs on the submitting
// goroutine, under the submission lock, after the entry is in the
// submission queue and before anything submits it.
func (d *Driver) OnActive(fn func()) { d.inflight.OnActive(fn) }

var _ core.Driver = (*Driver)(nil)
var _ core.VectoredIO = (*Driver)(nil)
var _ core.QuiescentDriver = (*Driver)(nil)
var _ core.DatagramIO = (*Driver)(nil)
var _ core.FileIO = (*Driver)(nil)
