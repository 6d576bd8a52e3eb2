package plugins

import (
	"context"

	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
)

// MaxIO is the most bytes one read or write moves through a driver plugin.
// A larger buffer is served partly, as the Driver contract allows (a read
// fills at most MaxIO bytes, a write reports at most MaxIO written), which
// bounds every frame and the memory an operation pins in both processes.
const MaxIO = 256 << 10

// DriverOptions configure a driver plugin's host side.
type DriverOptions struct {
	// Launch says how to start the plugin process; its Kind is set to
	// driver.
	Launch LaunchConfig
	// Restart is the policy after the process exits unexpectedly.
	Restart RestartPolicy
	// MaxInFlight bounds the asynchronous operations sent to the plugin
	// and not yet completed (4096 by default); MaxInFlightBytes bounds
	// their buffers (32 MiB by default, at least MaxIO). An operation
	// beyond either waits, pending, until completions make room: this is
	// the back-pressure on a plugin that falls behind.
	MaxInFlight      int
	MaxInFlightBytes int
	// WriteBehind bounds the bytes of one handle's writes that were
	// reported written but not yet written by the plugin (1 MiB by
	// default, at least MaxIO); a write beyond it waits.
	WriteBehind int
}

// Driver is a core.Driver whose operations run in a plugin process. It
// implements core.VectoredIO and core.DatagramIO as well; the plugin
// reports an error for the operations its own driver lacks.
//
// # Protocol
//
// The driver keeps one bidirectional gRPC stream (a session) with its
// plugin process. Operations are records appended to an outgoing frame
// under the driver's mutex (a write's bytes are copied into the frame
// there: the one copy on the way out); a sender goroutine ships whatever
// accumulated as one message, so operations issued while a message is in
// flight travel together. Completions come back the same way, batched by
// the plugin, and a receiver goroutine records each into its operation
// (a read's bytes stay in the received frame until the read's future
// copies them into the caller's buffer: the one copy on the way in), then
// hands the wakers to Park, which wakes them on the worker that owns the
// driver, as a readiness driver does for its events.
//
// Handles are identifiers the plugin assigns, stamped with the session's
// generation, so a handle of a process that exited never reaches its
// successor.
//
// # Failure
//
// When the process exits, every pending operation fails with an *Error
// naming the plugin and matching ErrPluginExited and net.ErrClosed, and
// handles of that process fail the same way afterwards. Operations issued
// while no process runs fail at once with ErrPluginUnavailable. The
// driver restarts the process according to its RestartPolicy; the runtime
// above it keeps running.
type Driver struct {
	opts    DriverOptions
	name    string
	log     *slog.Logger
	sup     *supervisor
	parkCh  chan struct{} // Unpark and completions; capacity 1
	parkTmr *time.Timer   // owned by the goroutine that parks

	mu       sync.Mutex
	sess     *session // nil while no process runs
	gen      uint64   // generation of the latest session
	closed   bool
	ops      map[uint64]*hostOp
	nextID   uint64
	out      wire.Enc
	inflight int
	inBytes  int
	waiters  []core.Waker // operations waiting for room in the window
	wakes    []core.Waker // wakers Park will wake
	spare    []core.Waker
	// handles are the open handles of the current session.
	handles map[core.Handle]*hostHandle

	// Counters for Stats.
	nOps, nSent, nRecv atomic.Uint64
}

// Stats are a driver plugin's counters since it was created.
type Stats struct {
	// Ops counts operations sent to the plugin (including cancels and
	// closes); Sent and Received count gRPC messages (frames) in each
	// direction. Ops/Sent is the batching factor on the way out.
	Ops, Sent, Received uint64
}

// Stats returns the driver's counters.
func (d *Driver) Stats() Stats {
	return Stats{Ops: d.nOps.Load(), Sent: d.nSent.Load(), Received: d.nRecv.Load()}
}

// hostHandle is the host's state of an open handle.
//
// # Reads that are abandoned
//
// A read dropped while the plugin runs it may still come back with bytes
// (the plugin's read completed while the cancel was on its way). Those
// bytes were taken from the stream and come before anything a later read
// gets, so they must not be lost, nor overtaken:
//
//   - stash keeps the bytes of dropped reads, and stashErr a failure one
//     received after them; the next read on the handle takes them first,
//     without asking the plugin;
//   - unsettled counts the dropped reads whose completion has not come
//     back; while there are any, a new read waits (readWaiters) instead
//     of asking the plugin, which would give it bytes that come after
//     theirs. The plugin answers every operation, a cancelled one too, so
//     the wait is one round trip;
//   - reads are the reads in flight in the plugin. When bytes reach the
//     stash while one is in flight (several reads at once on the handle),
//     it is cancelled and starts again from the stash (restart), so that
//     it does not wait for more bytes while bytes are kept.
type hostHandle struct {
	stash       []byte
	stashErr    error
	unsettled   int
	readWaiters []core.Waker
	reads       []*hostOp
	// werr is the first error of a write-behind write; later writes fail
	// with it.
	werr error
	// wbytes are the write-behind bytes the plugin has not written yet;
	// waiters are writes waiting for them to fall under the per-handle
	// limit.
	wbytes  int
	waiters []core.Waker
	// syncClose marks a listener or datagram socket, whose close waits
	// for the plugin (a Unix listener's file must be gone when Close
	// returns).
	syncClose bool
}

// hostOp is one operation sent to the plugin. Its fields after id are
// guarded by the driver's mutex.
type hostOp struct {
	id   uint64
	op   byte
	h    core.Handle
	cost int
	sync chan struct{} // closed on completion, for synchronous calls
	// behind marks a write-behind write: its future resolved when it was
	// queued; the completion only returns its room and reports an error.
	behind bool
	// restart: the host cancelled this read in the plugin because bytes
	// of dropped reads came first; its future starts again from the
	// stash, and the completion is the stash's (see hostHandle).
	restart bool
	state   opState
	waker   core.Waker

	// The completion.
	err    error
	n      int
	handle core.Handle
	addr   core.Addr
	data   []byte // aliases the completion frame
}

type opState uint8

const (
	opPending opState = iota
	opDone
	opDropped
)

// session is one process and its stream.
type session struct {
	gen    uint64
	proc   *process
	stream grpc.ClientStream
	cancel context.CancelFunc
	kick   chan struct{} // capacity 1: wakes the sender
	// closing asks the sender to half-close the stream after sending
	// what is queued (guarded by the driver's mutex).
	closing bool
	done    chan struct{} // closed when the receiver has seen the end
	start   time.Time
	err     error // why it ended; set before done is closed
}

// handle layout: generation (24 bits) | plugin's handle id (40 bits).
const wireBits = 40

func stamp(gen, wh uint64) core.Handle { return core.Handle(gen<<wireBits | wh) }

func unstamp(h core.Handle) (gen, wh uint64) {
	return uint64(h) >> wireBits, uint64(h) & (1<<wireBits - 1)
}

// NewDriver starts the plugin process and opens a session with it. The
// process is the driver's own: closing the driver ends it.
func NewDriver(o DriverOptions) (*Driver, error) {
	o.Launch.Kind = wire.KindDriver
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = 4096
	}
	if o.MaxInFlightBytes <= 0 {
		o.MaxInFlightBytes = 32 << 20
	}
	if o.MaxInFlightBytes < MaxIO {
		o.MaxInFlightBytes = MaxIO
	}
	if o.WriteBehind <= 0 {
		o.WriteBehind = 1 << 20
	}
	if o.WriteBehind < MaxIO {
		o.WriteBehind = MaxIO
	}
	log := o.Launch.Log
	if log == nil {
		log = slog.Default()
	}
	d := &Driver{
		opts:    o,
		name:    o.Launch.name(),
		log:     log,
		parkCh:  make(chan struct{}, 1),
		ops:     map[uint64]*hostOp{},
		handles: map[core.Handle]*hostHandle{},
	}
	d.sup = newSupervisor(&d.opts.Launch, o.Restart, log, d.startSession)
	if err := d.sup.start(); err != nil {
		return nil, err
	}
	return d, nil
}

// Name returns the plugin's name.
func (d *Driver) Name() string { return d.name }

// Info returns the running plugin's self-description and whether a process
// runs now.
func (d *Driver) Info() (wire.Info, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.sess == nil {
		return wire.Info{}, false
	}
	return d.sess.proc.info, true
}

// Restarts reports how many times the process was restarted.
func (d *Driver) Restarts() int { return d.sup.restarts() }

// KillProcess kills the plugin process at once (SIGKILL), as a crash
// would. Tests and operators use it; the restart policy applies.
func (d *Driver) KillProcess() error {
	d.mu.Lock()
	s := d.sess
	d.mu.Unlock()
	if s == nil {
		return d.err(ErrPluginUnavailable)
	}
	p, err := findProcess(s.proc.pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

func (d *Driver) err(cause error) error {
	return &Error{Plugin: d.name, Path: d.opts.Launch.Path, Err: cause}
}

// startSession opens a session on a fresh process. It is the supervisor's
// start function.
func (d *Driver) startSession(p *process) (func() error, error) {
	ctx, cancel := context.WithCancel(context.Background())
	stream, err := wire.OpenSession(ctx, p.conn, wire.DriverServiceName)
	if err != nil {
		cancel()
		return nil, d.err(fmt.Errorf("opening the driver session: %w", err))
	}
	s := &session{
		proc:   p,
		stream: stream,
		cancel: cancel,
		kick:   make(chan struct{}, 1),
		done:   make(chan struct{}),
		start:  time.Now(),
	}
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		cancel()
		return nil, d.err(core.ErrDriverClosed)
	}
	d.gen++
	s.gen = d.gen
	d.sess = s
	d.mu.Unlock()
	go d.sender(s)
	go d.receiver(s)
	wait := func() error {
		<-s.done
		return s.err
	}
	return wait, nil
}

// sender ships the outgoing frame whenever it is kicked.
func (d *Driver) sender(s *session) {
	for {
		select {
		case <-s.kick:
		case <-s.done:
			return
		}
		d.mu.Lock()
		var buf []byte
		if d.sess == s {
			buf = d.out.B
			d.out.B = nil
		}
		closing := s.closing
		d.mu.Unlock()
		if len(buf) > 0 {
			// A fresh buffer per message: gRPC may hold on to it.
			if err := s.stream.SendMsg(wrapperspb.Bytes(buf)); err != nil {
				return // the receiver sees the stream end
			}
			d.nSent.Add(1)
		}
		if closing {
			_ = s.stream.CloseSend()
			return
		}
	}
}

// kickLocked wakes the sender of the current session.
func (d *Driver) kickLocked() {
	d.nOps.Add(1)
	if d.sess == nil {
		return
	}
	select {
	case d.sess.kick <- struct{}{}:
	default:
	}
}

// receiver applies completion frames until the stream ends, then fails
// what is pending.
func (d *Driver) receiver(s *session) {
	var err error
	for {
		m := new(wrapperspb.BytesValue)
		if err = s.stream.RecvMsg(m); err != nil {
			break
		}
		d.nRecv.Add(1)
		if err = d.apply(s, m.Value); err != nil {
			break
		}
	}
	d.mu.Lock()
	closed := d.closed
	if d.sess == s {
		d.sess = nil
		d.out.B = nil
		var cause error
		if closed {
			cause = wire.DriverClosedErr
		} else {
			cause = d.err(fmt.Errorf("%w (pid %d) with the operation pending: %v", ErrPluginExited, s.proc.pid, err))
		}
		d.failAllLocked(cause)
	}
	d.mu.Unlock()
	d.signalPark()
	s.err = err
	s.cancel()
	close(s.done)
}

// failAllLocked fails every outstanding operation with err.
func (d *Driver) failAllLocked(err error) {
	for id, o := range d.ops {
		delete(d.ops, id)
		o.err = err
		if o.sync != nil {
			close(o.sync)
			continue
		}
		if o.state == opPending {
			o.state = opDone
			if o.waker != nil {
				d.wakes = append(d.wakes, o.waker)
				o.waker = nil
			}
		}
	}
	d.inflight, d.inBytes = 0, 0
	d.wakes = append(d.wakes, d.waiters...)
	clear(d.waiters)
	d.waiters = d.waiters[:0]
	for h, hh := range d.handles {
		d.wakeHandleLocked(hh)
		delete(d.handles, h)
	}
}

// wakeHandleLocked wakes every operation waiting on a handle that is
// going away, to fail.
func (d *Driver) wakeHandleLocked(hh *hostHandle) {
	d.wakes = append(d.wakes, hh.waiters...)
	d.wakes = append(d.wakes, hh.readWaiters...)
}

// apply records the completions of one frame.
func (d *Driver) apply(s *session, frame []byte) error {
	dec := wire.NewDec(frame)
	d.mu.Lock()
	woke := false
	for dec.More() {
		id := dec.Uint()
		status := dec.U8()
		if dec.Err() != nil {
			break
		}
		if id == 0 && status == wire.StatusErr {
			// The plugin refused a request frame (see package wire).
			err := dec.Error()
			d.mu.Unlock()
			return protocolError(fmt.Errorf("the plugin rejected a request frame: %w", err))
		}
		o := d.ops[id]
		if o == nil {
			d.mu.Unlock()
			return protocolError(fmt.Errorf("completion of unknown operation %d", id))
		}
		delete(d.ops, id)
		switch status {
		case wire.StatusOK:
			d.decodeResult(dec, s, o)
		case wire.StatusErr:
			o.err = dec.Error()
		case wire.StatusCancelled:
			o.err = wire.DriverClosedErr // never seen: only dropped ops are cancelled
		default:
			dec.Failf("completion status %d of operation %d", status, id)
		}
		if dec.Err() != nil {
			// The operation stays pending: the session ends, which
			// fails it with the others.
			d.ops[id] = o
			d.mu.Unlock()
			return protocolError(dec.Err())
		}
		if o.sync != nil {
			close(o.sync)
			continue
		}
		d.releaseLocked(o)
		woke = true
		if o.behind {
			if hh := d.handles[o.h]; hh != nil {
				hh.wbytes -= o.cost
				if o.err != nil && hh.werr == nil {
					hh.werr = o.err
				}
				d.wakes = append(d.wakes, hh.waiters...)
				clear(hh.waiters)
				hh.waiters = hh.waiters[:0]
			}
			continue
		}
		if o.state == opDropped {
			if o.op == wire.OpRead {
				d.settleReadLocked(o, status)
			} else if status == wire.StatusOK {
				d.cleanupLocked(o)
			}
			continue
		}
		if o.op == wire.OpRead {
			if hh := d.handles[o.h]; hh != nil {
				hh.forgetRead(o)
			}
		}
		o.state = opDone
		if o.waker != nil {
			d.wakes = append(d.wakes, o.waker)
			o.waker = nil
		}
	}
	if dec.Err() != nil {
		d.mu.Unlock()
		return protocolError(dec.Err())
	}
	d.mu.Unlock()
	if woke {
		d.signalPark()
	}
	return nil
}

// decodeResult reads the results of a successful operation. A result
// the operation cannot have (a handle id outside its 40 bits or already
// open, more bytes than asked for) is malformed; nothing is recorded
// then.
func (d *Driver) decodeResult(dec *wire.Dec, s *session, o *hostOp) {
	handle := func() core.Handle {
		wh := dec.Uint()
		h := stamp(s.gen, wh)
		switch {
		case dec.Err() != nil:
		case wh == 0 || wh >= 1<<wireBits:
			dec.Failf("handle id %d of operation %d, outside 1 to 2^%d-1", wh, o.id, wireBits)
		case d.handles[h] != nil:
			dec.Failf("handle id %d of operation %d, already open", wh, o.id)
		}
		return h
	}
	count := func(n uint64) int {
		if n > uint64(o.cost) {
			dec.Failf("%d bytes done by operation %d of %d bytes", n, o.id, o.cost)
			return 0
		}
		return int(n)
	}
	switch o.op {
	case wire.OpListen, wire.OpBind, wire.OpAccept:
		h, addr := handle(), dec.Addr()
		if dec.Err() == nil {
			o.handle, o.addr = h, addr
			d.handles[h] = &hostHandle{syncClose: o.op != wire.OpAccept}
		}
	case wire.OpConnect:
		if h := handle(); dec.Err() == nil {
			o.handle = h
			d.handles[h] = &hostHandle{}
		}
	case wire.OpRead:
		o.data = dec.Bytes()
		o.n = count(uint64(len(o.data)))
	case wire.OpRecvFrom:
		o.data = dec.Bytes()
		o.n = count(uint64(len(o.data)))
		o.addr = dec.Addr()
	case wire.OpWrite, wire.OpSendTo:
		o.n = count(dec.Uint())
	case wire.OpLocalAddr, wire.OpPeerAddr:
		o.addr = dec.Addr()
	}
}

// cleanupLocked disposes of the result of an operation dropped after it
// had completed in the plugin: an accepted or connected socket is closed,
// what a stream read received is kept for the next read.
func (d *Driver) cleanupLocked(o *hostOp) {
	switch o.op {
	case wire.OpAccept, wire.OpConnect:
		if o.err == nil {
			d.closeLocked(o.handle)
		}
	case wire.OpRead:
		if hh := d.handles[o.h]; hh != nil {
			d.keepLocked(hh, o)
		}
	}
	o.data = nil
}

// keepLocked stashes what the dropped read o received (see hostHandle).
func (d *Driver) keepLocked(hh *hostHandle, o *hostOp) {
	switch {
	case o.err != nil:
		if hh.stashErr == nil {
			hh.stashErr = o.err
		}
	case len(o.data) > 0:
		hh.stash = append(hh.stash, o.data...)
		d.restartReadsLocked(hh)
	}
}

// settleReadLocked applies the completion of a read dropped while the
// plugin ran it (status: the completion's): what it received is kept,
// and once no dropped read is outstanding the reads waiting for that go
// on.
func (d *Driver) settleReadLocked(o *hostOp, status byte) {
	hh := d.handles[o.h]
	if hh == nil {
		o.data = nil
		return
	}
	hh.unsettled--
	if status != wire.StatusCancelled {
		d.keepLocked(hh, o)
	}
	o.data = nil
	if hh.unsettled == 0 || len(hh.stash) > 0 || hh.stashErr != nil {
		d.wakes = append(d.wakes, hh.readWaiters...)
		clear(hh.readWaiters)
		hh.readWaiters = hh.readWaiters[:0]
	}
}

// restartReadsLocked cancels the reads in flight on hh because bytes
// reached its stash: each starts again and takes them (see hostHandle).
// Its completion, when it comes, is a dropped read's.
func (d *Driver) restartReadsLocked(hh *hostHandle) {
	for i, o := range hh.reads {
		o.restart, o.state = true, opDropped
		hh.unsettled++
		d.out.U8(wire.OpCancel)
		d.out.Uint(o.id)
		d.kickLocked()
		if o.waker != nil {
			d.wakes = append(d.wakes, o.waker)
			o.waker = nil
		}
		hh.reads[i] = nil
	}
	hh.reads = hh.reads[:0]
}

// forgetRead removes o from the reads in flight.
func (hh *hostHandle) forgetRead(o *hostOp) {
	for i, r := range hh.reads {
		if r == o {
			last := len(hh.reads) - 1
			hh.reads[i], hh.reads[last] = hh.reads[last], nil
			hh.reads = hh.reads[:last]
			return
		}
	}
}

// closeLocked forgets h and asks the plugin to close it, without waiting
// for a reply (the plugin fails the operations pending on it). Writes
// waiting for room on h are woken to fail.
func (d *Driver) closeLocked(h core.Handle) {
	hh := d.handles[h]
	if hh == nil {
		return
	}
	delete(d.handles, h)
	d.wakeHandleLocked(hh)
	_, wh := unstamp(h)
	d.out.U8(wire.OpCloseHandle)
	d.out.Uint(0)
	d.out.Uint(wh)
	d.kickLocked()
}

// forgetLocked forgets h before a synchronous close.
func (d *Driver) forgetLocked(h core.Handle) {
	if hh := d.handles[h]; hh != nil {
		delete(d.handles, h)
		d.wakeHandleLocked(hh)
	}
}

// releaseLocked gives an asynchronous operation's room in the window back
// and lets the operations that waited for it retry.
func (d *Driver) releaseLocked(o *hostOp) {
	d.inflight--
	d.inBytes -= o.cost
	if len(d.waiters) > 0 {
		d.wakes = append(d.wakes, d.waiters...)
		clear(d.waiters)
		d.waiters = d.waiters[:0]
	}
}

func (d *Driver) signalPark() {
	select {
	case d.parkCh <- struct{}{}:
	default:
	}
}

// Park waits at most timeout for completions and wakes the tasks whose
// operations completed. A negative timeout waits until a completion or
// Unpark.
func (d *Driver) Park(timeout time.Duration) error {
	d.mu.Lock()
	if len(d.wakes) == 0 && timeout != 0 {
		d.mu.Unlock()
		if timeout < 0 {
			<-d.parkCh
		} else {
			if d.parkTmr == nil {
				d.parkTmr = time.NewTimer(timeout)
			} else {
				d.parkTmr.Reset(timeout)
			}
			select {
			case <-d.parkCh:
				d.parkTmr.Stop()
			case <-d.parkTmr.C:
			}
		}
		d.mu.Lock()
	}
	wakes := d.wakes
	d.wakes = d.spare[:0]
	d.mu.Unlock()
	for i, w := range wakes {
		w.Wake()
		wakes[i] = nil
	}
	d.mu.Lock()
	d.spare = wakes[:0]
	d.mu.Unlock()
	return nil
}

// Unpark makes the current or next Park return.
func (d *Driver) Unpark() { d.signalPark() }

// Close fails every pending operation with core.ErrDriverClosed, ends the
// session (the plugin drops its operations and closes its driver) and the
// process, gracefully. It waits for the process to exit.
func (d *Driver) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	s := d.sess
	d.failAllLocked(wire.DriverClosedErr)
	if s != nil {
		s.closing = true
		d.out.B = nil
		d.kickLocked()
	}
	d.mu.Unlock()
	d.signalPark()
	d.sup.stop()
	if s != nil {
		// The plugin ends the stream once it has closed its driver.
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			s.cancel()
			<-s.done
		}
	}
	d.sup.wait()
	return nil
}

// ---------------------------------------------------------------------------
// Submitting operations.

// sessionForLocked returns the current session and, when withHandle, the
// state and plugin-side id of h, which must be an open handle of that
// session. It is called with the mutex held.
func (d *Driver) sessionForLocked(h core.Handle, withHandle bool) (*session, *hostHandle, uint64, error) {
	if d.closed {
		return nil, nil, 0, wire.DriverClosedErr
	}
	s := d.sess
	if s == nil {
		return nil, nil, 0, d.err(ErrPluginUnavailable)
	}
	if !withHandle {
		return s, nil, 0, nil
	}
	gen, wh := unstamp(h)
	if gen != s.gen {
		if gen < s.gen && gen != 0 {
			return nil, nil, 0, d.err(fmt.Errorf("%w: the handle belonged to an earlier process", ErrPluginExited))
		}
		return nil, nil, 0, net.ErrClosed
	}
	hh := d.handles[h]
	if hh == nil {
		return nil, nil, 0, net.ErrClosed
	}
	return s, hh, wh, nil
}

// call runs a synchronous operation: it sends the request and waits for
// the completion, without a window slot (the callers are the runtime's
// workers, so there are few at once).
func (d *Driver) call(op byte, h core.Handle, withHandle bool, enc func(e *wire.Enc)) (*hostOp, error) {
	d.mu.Lock()
	_, _, wh, err := d.sessionForLocked(h, withHandle)
	if err != nil {
		d.mu.Unlock()
		return nil, err
	}
	d.nextID++
	o := &hostOp{id: d.nextID, op: op, h: h, sync: make(chan struct{})}
	d.ops[o.id] = o
	d.out.U8(op)
	d.out.Uint(o.id)
	if withHandle {
		d.out.Uint(wh)
	}
	if enc != nil {
		enc(&d.out)
	}
	d.kickLocked()
	d.mu.Unlock()
	<-o.sync
	return o, o.err
}

// submit sends an asynchronous operation if the window has room; if not,
// it registers the waker to retry and returns nil, nil.
func (d *Driver) submit(cx *core.Context, op byte, h core.Handle, withHandle bool, cost int, enc func(e *wire.Enc)) (*hostOp, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, _, wh, err := d.sessionForLocked(h, withHandle)
	if err != nil {
		return nil, err
	}
	return d.submitLocked(cx, op, h, wh, withHandle, cost, enc), nil
}

// submitLocked is submit for a checked session and handle (wh, its
// plugin-side id); nil means no room, the waker registered.
func (d *Driver) submitLocked(cx *core.Context, op byte, h core.Handle, wh uint64, withHandle bool, cost int, enc func(e *wire.Enc)) *hostOp {
	if d.inflight >= d.opts.MaxInFlight || (d.inBytes+cost > d.opts.MaxInFlightBytes && d.inflight > 0) {
		d.waiters = append(d.waiters, cx.Waker())
		return nil
	}
	d.inflight++
	d.inBytes += cost
	d.nextID++
	o := &hostOp{id: d.nextID, op: op, h: h, cost: cost, waker: cx.Waker()}
	d.ops[o.id] = o
	d.out.U8(op)
	d.out.Uint(o.id)
	if withHandle {
		d.out.Uint(wh)
	}
	if enc != nil {
		enc(&d.out)
	}
	d.kickLocked()
	return o
}

// await reports whether o completed, registering cx's waker if not.
func (d *Driver) awaitLocked(o *hostOp, cx *core.Context) bool {
	if o.state == opDone {
		return true
	}
	o.waker = cx.Waker()
	return false
}

// drop abandons o: a pending operation is cancelled in the plugin (its
// completion, when it comes, is cleaned up), a completed one whose result
// was never taken is cleaned up now.
func (d *Driver) drop(o *hostOp, consumed bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch o.state {
	case opPending:
		o.state = opDropped
		o.waker = nil
		if d.sess != nil {
			if _, ok := d.ops[o.id]; ok {
				d.out.U8(wire.OpCancel)
				d.out.Uint(o.id)
				d.kickLocked()
				if hh := d.handles[o.h]; hh != nil && o.op == wire.OpRead {
					// Its completion may bring bytes that come before
					// any later read's (see hostHandle).
					hh.forgetRead(o)
					hh.unsettled++
				}
			}
		}
	case opDone:
		o.state = opDropped
		if !consumed {
			d.cleanupLocked(o)
		}
	}
}

// startRead begins a stream read of h into bufs (see hostHandle): from
// what dropped reads left behind, resolved at once (done); or, while a
// dropped read's completion is outstanding, waiting for it (nothing
// started, the waker registered); or as a request to the plugin (o; nil
// with no error when the window is full, the waker registered).
func (d *Driver) startRead(cx *core.Context, h core.Handle, bufs [][]byte) (n int, err error, done bool, o *hostOp) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, hh, wh, err := d.sessionForLocked(h, true)
	if err != nil {
		return 0, err, true, nil
	}
	switch {
	case len(hh.stash) > 0:
		n = scatter(hh.stash, bufs)
		hh.stash = hh.stash[n:]
		if len(hh.stash) == 0 {
			hh.stash = nil
		}
		return n, nil, true, nil
	case hh.stashErr != nil:
		err, hh.stashErr = hh.stashErr, nil
		return 0, err, true, nil
	case hh.unsettled > 0:
		hh.readWaiters = append(hh.readWaiters, cx.Waker())
		return 0, nil, false, nil
	}
	total := clampTotal(bufs)
	o = d.submitLocked(cx, wire.OpRead, h, wh, true, total, func(e *wire.Enc) { e.Uint(uint64(total)) })
	if o != nil {
		hh.reads = append(hh.reads, o)
	}
	return 0, nil, false, o
}

// writeBehind queues a stream write for the plugin and reports it done at
// once (see Driver); it reports false, with the waker registered, when the
// handle's write-behind limit or the window is full.
func (d *Driver) writeBehind(cx *core.Context, h core.Handle, bufs [][]byte) (int, error, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, hh, wh, err := d.sessionForLocked(h, true)
	if err != nil {
		return 0, err, true
	}
	if hh.werr != nil {
		return 0, hh.werr, true
	}
	total := clampTotal(bufs)
	if hh.wbytes > 0 && hh.wbytes+total > d.opts.WriteBehind {
		hh.waiters = append(hh.waiters, cx.Waker())
		return 0, nil, false
	}
	if d.inflight >= d.opts.MaxInFlight || (d.inBytes+total > d.opts.MaxInFlightBytes && d.inflight > 0) {
		d.waiters = append(d.waiters, cx.Waker())
		return 0, nil, false
	}
	d.inflight++
	d.inBytes += total
	hh.wbytes += total
	d.nextID++
	o := &hostOp{id: d.nextID, op: wire.OpWrite, h: h, cost: total, behind: true, state: opDone}
	d.ops[o.id] = o
	d.out.U8(wire.OpWrite)
	d.out.Uint(o.id)
	d.out.Uint(wh)
	// The one copy of written data in the host: gathered from the
	// caller's buffers into the request frame.
	dst := d.out.BytesN(total)
	for _, b := range bufs {
		if len(dst) == 0 {
			break
		}
		dst = dst[copy(dst, b):]
	}
	d.kickLocked()
	return total, nil, true
}

// scatter copies src into bufs in order and returns the count.
func scatter(src []byte, bufs [][]byte) int {
	n := 0
	for _, b := range bufs {
		if n == len(src) {
			break
		}
		n += copy(b, src[n:])
	}
	return n
}

func clampTotal(bufs [][]byte) int {
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	return min(total, MaxIO)
}
