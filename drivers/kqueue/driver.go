//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/readiness"
	"github.com/weftrt/weft/drivers/internal/slab"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// kqueueSys is the driver's view of the kernel event queue: the system
// calls that differ between a real kqueue (sys_bsd.go) and the emulation
// the driver runs on under Linux (sys_linux.go). Everything else the
// driver does (sockets, reads and writes) is the same code on every
// system.
type kqueueSys interface {
	// kevent is kevent(2): it applies changes, then returns up to
	// len(events) events, waiting up to timeout (nil: for ever) for one.
	kevent(changes, events []kevent, timeout *unix.Timespec) (int, error)
	// closeFD closes a descriptor. The kernel deletes its knotes; the
	// emulation, which cannot see close(2), needs to be told.
	closeFD(fd int) error
	// close closes the event queue.
	close() error
}

// Park states, for Unpark's shortcut (see Unpark) and for register (see
// register).
const (
	parkIdle uint32 = iota
	parkWaiting
	parkDispatching
)

// userIdent is the ident of the driver's EVFILT_USER event. EVFILT_USER
// idents are their own namespace, so it never clashes with a descriptor.
const userIdent = 0

// zeroTimespec is the timeout of a kevent call that must not wait. It is
// only ever read.
var zeroTimespec unix.Timespec

// Driver is the kqueue driver. Create it with New (darwin and the BSDs) or
// NewEmulated (Linux, for tests); it implements core.Driver,
// core.VectoredIO and core.DatagramIO. Every method may be called from any
// goroutine; Park calls are serialised.
type Driver struct {
	// Ops is the socket and I/O operations, shared with drivers/epoll
	// (package drivers/internal/readiness): everything but Park, Unpark,
	// CloseHandle and Close.
	readiness.Ops

	sys kqueueSys
	// kq counts the kevent calls in flight (Unpark, register) so that
	// Close never closes the event queue under one, whose descriptor
	// number could then be reused by an unrelated open.
	kq readiness.FD
	// userEvent says whether Unpark triggers an EVFILT_USER event (darwin,
	// freebsd) or writes to the pipe wakeR/wakeW (netbsd, openbsd).
	userEvent    bool
	wakeR, wakeW readiness.FD
	// slab holds the registrations; its count is the core.QuiescentDriver
	// state.
	slab *slab.Slab[readiness.IO, *readiness.IO]
	// closeFn closes a registered descriptor through sys; every FD of
	// the driver uses it.
	closeFn func(int)

	// parkMu serialises Park and Close; the fields below it belong to
	// whoever holds it.
	parkMu      sync.Mutex
	events      []kevent
	timeout     unix.Timespec
	tick        uint16
	wakers      []core.Waker
	lastGosched time.Time

	// chMu guards changes, the registrations waiting to be submitted
	// with the next Park's kevent call, and orders the transition of
	// state to parkWaiting with register (see register).
	chMu    sync.Mutex
	changes []kevent

	// state says whether a Park is waiting in kevent or dispatching what
	// it returned. Park stores it; Unpark and register load it.
	state atomic.Uint32
	// unparkPending is set by the Unpark that triggers the wake-up and
	// cleared by the Park that receives it, so a burst of Unparks costs
	// one system call. With the pipe, Park drains it first and clears the
	// flag after: in the other order an Unpark between the clear and the
	// drain would write, the drain would swallow the byte, and the flag
	// would stay set with nothing behind it, silencing every later
	// Unpark. An Unpark between the drain and the clear writes nothing,
	// which is safe because this Park is about to return and its caller
	// re-checks for work. EVFILT_USER (EV_CLEAR) has no drain: the event
	// is reset as it is delivered, and a trigger after the clear posts a
	// new one.
	unparkPending atomic.Bool
	closed        atomic.Bool
}

// newDriver builds the driver over an event queue, which it owns from now
// on (and closes on failure).
func newDriver(sys kqueueSys, events int, userEvent bool) (*Driver, error) {
	if events < 1 {
		events = DefaultEvents
	}
	d := &Driver{
		sys:       sys,
		userEvent: userEvent,
		slab:      slab.New[readiness.IO](),
		events:    make([]kevent, events),
	}
	d.Ops = readiness.NewOps((*registry)(d), "kqueue", sockets.ListenBacklog())
	d.closeFn = func(fd int) { _ = sys.closeFD(fd) }
	d.kq.Init(-1, func(int) { _ = sys.close() })
	if userEvent {
		add := []kevent{mkKevent(userIdent, evfiltUser, evAdd|evClear, 0)}
		if _, err := sys.kevent(add, nil, &zeroTimespec); err != nil {
			sys.close()
			return nil, fmt.Errorf("kqueue: %w", os.NewSyscallError("kevent", err))
		}
		return d, nil
	}
	r, w, err := sysPipe()
	if err != nil {
		sys.close()
		return nil, fmt.Errorf("kqueue: %w", err)
	}
	d.wakeR.Init(r, d.closeFn)
	d.wakeW.Init(w, d.closeFn)
	add := []kevent{mkKevent(r, evfiltRead, evAdd|evClear, 0)}
	if _, err := sys.kevent(add, nil, &zeroTimespec); err != nil {
		sys.closeFD(r)
		sys.closeFD(w)
		sys.close()
		return nil, fmt.Errorf("kqueue: %w", os.NewSyscallError("kevent", err))
	}
	return d, nil
}

// kevent calls the event queue, keeping it open for the duration.
func (d *Driver) kevent(changes, events []kevent, timeout *unix.Timespec) (int, error) {
	if !d.kq.Acquire() {
		return 0, readiness.ErrDriverClosed
	}
	n, err := d.sys.kevent(changes, events, timeout)
	d.kq.Release()
	return n, err
}

// Park waits at most timeout for events (negative: until one arrives or
// Unpark; zero: poll) and wakes the operations they unblock. Registrations
// made since the last Park are submitted first, in one kevent call that
// also collects the events already pending.
func (d *Driver) Park(timeout time.Duration) error {
	d.parkMu.Lock()
	defer d.parkMu.Unlock()
	if d.closed.Load() {
		return readiness.ErrDriverClosed
	}
	if timeout != 0 {
		d.refreshSchedTick()
	}
	for {
		d.chMu.Lock()
		if len(d.changes) == 0 {
			if timeout != 0 {
				// From here on register submits its own changes (see
				// register): this Park is about to block without them.
				d.state.Store(parkWaiting)
			}
			d.chMu.Unlock()
			break
		}
		n, err := d.submitLocked()
		d.chMu.Unlock()
		if err != nil {
			d.dispatch(0) // wakes the operations of failed registrations
			return d.parkError(err)
		}
		d.state.Store(parkDispatching)
		d.dispatch(n)
		d.state.Store(parkIdle)
		if n > 0 || timeout == 0 {
			return nil
		}
	}
	var ts *unix.Timespec
	if timeout >= 0 {
		d.timeout = unix.NsecToTimespec(int64(timeout))
		ts = &d.timeout
	}
	n, err := d.kevent(nil, d.events, ts)
	d.state.Store(parkDispatching)
	defer d.state.Store(parkIdle)
	if err != nil {
		return d.parkError(err)
	}
	d.dispatch(n)
	return nil
}

// parkError interprets a failed kevent call of Park.
func (d *Driver) parkError(err error) error {
	switch {
	case errors.Is(err, unix.EINTR):
		return nil // a signal; the caller re-parks if it must
	case errors.Is(err, readiness.ErrDriverClosed):
		return readiness.ErrDriverClosed
	}
	return fmt.Errorf("kqueue: %w", os.NewSyscallError("kevent", err))
}

// submitLocked submits a batch of the queued changes in a kevent call that
// does not wait, and collects the events already pending with it. Called
// with chMu held, which keeps CloseHandle from closing (and the kernel
// from reusing) a descriptor whose change is in the batch.
//
// A change the kernel refuses comes back as an EV_ERROR entry with the
// errno in data; the registration is marked failed, so its operations
// fail with that error, wrapped as Go's net does (*os.SyscallError of
// syscall.Errno). That is done here, under chMu, for the same reason: the
// descriptor number still names the registration the change was for.
// The batch is at most the size of the event list, so every error has a
// place in it.
func (d *Driver) submitLocked() (int, error) {
	batch := d.changes[:min(len(d.changes), len(d.events))]
	n, err := d.kevent(batch, d.events, &zeroTimespec)
	if err != nil && !errors.Is(err, unix.EINTR) {
		// The kernel applies changes up to the one that failed; without
		// knowing which, fail them all rather than leave a descriptor
		// silently unregistered.
		for _, c := range batch {
			d.failRegistration(int(c.Ident), err)
		}
	}
	// On EINTR the changes were applied (kevent(2)).
	d.changes = slices.Delete(d.changes, 0, len(batch))
	if err != nil {
		return 0, err
	}
	for i := range n {
		ev := &d.events[i]
		if int(ev.Flags)&evError != 0 && ev.Data != 0 {
			d.failRegistration(int(ev.Ident), syscall.Errno(ev.Data))
		}
	}
	return n, nil
}

// failRegistration marks the registration of fd failed with err and
// queues its waiters' wakers for dispatch. Called with chMu and parkMu.
func (d *Driver) failRegistration(fd int, err error) {
	io := d.slab.At(fd)
	if io == nil {
		return // closed since
	}
	io.MarkFailed(os.NewSyscallError("kevent", err))
	d.wakers = io.WakeAll(d.wakers)
}

// dispatch sets the readiness the first n events report, and wakes the
// operations waiting for it (and those queued by failRegistration).
func (d *Driver) dispatch(n int) {
	d.tick++
	for i := range n {
		ev := &d.events[i]
		filter, flags := int(ev.Filter), int(ev.Flags)
		switch {
		case flags&evError != 0:
			continue // a change's result, handled by submitLocked
		case d.userEvent && filter == evfiltUser:
			d.unparkPending.Store(false)
			continue
		case !d.userEvent && filter == evfiltRead && int(ev.Ident) == d.wakeR.N():
			d.drainWake()
			if testHookWakeDrained != nil {
				testHookWakeDrained(d)
			}
			d.unparkPending.Store(false) // after the drain: see unparkPending
			continue
		}
		io := d.slab.At(int(ev.Ident))
		if io == nil {
			continue // closed since the kernel queued the event
		}
		ready := readinessOf(filter, flags, uint32(ev.Fflags))
		io.SetReadiness(d.tick, ready)
		d.wakers = io.Wake(ready, d.wakers)
	}
	for i, w := range d.wakers {
		w.Wake()
		d.wakers[i] = nil
	}
	d.wakers = d.wakers[:0]
}

// readinessOf translates an event to readiness bits. EV_EOF on the read
// filter means the peer will send nothing more (reads see the end of the
// stream), on the write filter that writes will fail; a non-zero fflags
// with EV_EOF is the socket's pending error (ECONNRESET, ECONNREFUSED...),
// which both directions' next system call reports, so both may try.
func readinessOf(filter, flags int, fflags uint32) uint64 {
	var r uint64
	eof := flags&evEOF != 0
	switch filter {
	case evfiltRead:
		r = readiness.Readable
		if eof {
			r |= readiness.ReadClosed
		}
	case evfiltWrite:
		r = readiness.Writable
		if eof {
			r |= readiness.WriteClosed
		}
	}
	if eof && fflags != 0 {
		r |= readiness.Errored | readiness.Readable | readiness.Writable
	}
	return r
}

// refreshSchedTick passes through Go's scheduler (runtime.Gosched) if the
// parking goroutine has not for schedTickRefresh. A scheduler worker runs
// tasks in a loop that never returns to Go's scheduler, and Go's sysmon
// takes the P of a goroutine that has not been rescheduled for 10 ms
// whenever it finds it in a system call; parked in kevent, the worker
// would lose its P on nearly every park (the epoll driver measured the
// cost; the mechanism is the same here).
func (d *Driver) refreshSchedTick() {
	now := time.Now()
	if now.Sub(d.lastGosched) < schedTickRefresh {
		return
	}
	d.lastGosched = now
	runtime.Gosched()
}

// schedTickRefresh is well under sysmon's 10 ms preemption threshold.
const schedTickRefresh = 8 * time.Millisecond

// drainWake empties the wake-up pipe.
func (d *Driver) drainWake() {
	if !d.wakeR.Acquire() {
		return
	}
	var buf [64]byte
	for {
		n, err := unix.Read(d.wakeR.N(), buf[:])
		if n < len(buf) || err != nil {
			break
		}
	}
	d.wakeR.Release()
}

// testHookWakeDrained, when set by a test, runs in Park between draining
// the wake pipe and clearing unparkPending.
var testHookWakeDrained func(*Driver)

// Unpark makes the current or next Park return promptly. It costs nothing
// while a Park is dispatching events (that Park is about to return, and
// the caller's re-check after it returns sees whatever the unparker
// published before calling Unpark) and one system call per burst
// otherwise: a kevent triggering the EVFILT_USER event, or a write to the
// pipe.
func (d *Driver) Unpark() {
	if d.state.Load() == parkDispatching || d.unparkPending.Swap(true) {
		return
	}
	if d.userEvent {
		trigger := [1]kevent{mkKevent(userIdent, evfiltUser, 0, noteTrigger)}
		_, _ = d.kevent(trigger[:], nil, &zeroTimespec)
		return
	}
	if !d.wakeW.Acquire() {
		return
	}
	one := [1]byte{1}
	_, _ = unix.Write(d.wakeW.N(), one[:]) // EAGAIN: the pipe is full, a wake is pending anyway
	d.wakeW.Release()
}

// Close fails every pending operation with an error matching
// core.ErrDriverClosed and net.ErrClosed, closes every descriptor the
// driver registered, then its wake-up pipe and its event queue. It waits
// for a Park in progress to return. Calling it again does nothing.
func (d *Driver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.Unpark()
	d.parkMu.Lock()
	defer d.parkMu.Unlock()
	var wakers []core.Waker
	ios := d.slab.CloseAll()
	d.chMu.Lock()
	d.changes = nil // nothing submits them any more
	d.chMu.Unlock()
	for _, io := range ios {
		io.MarkShutdown()
		wakers = io.WakeAll(wakers)
		io.Release()
	}
	for _, w := range wakers {
		w.Wake()
	}
	if !d.userEvent {
		d.wakeR.BeginClose()
		d.wakeW.BeginClose()
	}
	d.kq.BeginClose()
	return nil
}

// register adds fd to the driver with initial readiness bits, and its read
// and write filters (EV_ADD | EV_CLEAR: edge-triggered) to the event queue
// in one batch. On failure the caller still owns fd.
//
// When no Park is blocked in kevent the changes are queued, and the next
// Park submits them with its own kevent call: a registration then costs no
// system call of its own. Nothing is lost by the delay, because the kernel
// evaluates a filter when it is added and reports a descriptor that is
// already ready. When a Park is blocked, it would not see queued changes
// until it returns, so register submits them itself, at once; a knote
// that is active when added wakes the blocked Park. The choice is made
// under chMu, under which Park moves to parkWaiting only after taking
// every queued change: a change is either queued before that (and taken)
// or sees parkWaiting (and submitted here).
func (d *Driver) register(fd int, kind readiness.Kind, network string, initial uint64) (core.Handle, *readiness.IO, error) {
	io := readiness.NewIO(fd, d.closeFn, kind, network, initial)
	h, err := d.slab.InsertAt(fd, io)
	switch err {
	case nil:
	case slab.ErrClosed:
		return 0, nil, readiness.ErrDriverClosed
	default:
		return 0, nil, errSlotInUse
	}
	// The insert counted the descriptor (and ran the activation hook)
	// before the changes are queued: a scheduler woken by the hook parks
	// and submits them (or is already parked, and register submits them
	// itself).
	changes := [2]kevent{
		mkKevent(fd, evfiltRead, evAdd|evClear, 0),
		mkKevent(fd, evfiltWrite, evAdd|evClear, 0),
	}
	d.chMu.Lock()
	if d.state.Load() != parkWaiting {
		d.changes = append(d.changes, changes[:]...)
		d.chMu.Unlock()
		return h, io, nil
	}
	// No events list: a refused change makes the call fail with its errno
	// instead of returning an EV_ERROR entry, and no pending event is
	// taken from the Park that is waiting for it.
	_, err = d.kevent(changes[:], nil, &zeroTimespec)
	d.chMu.Unlock()
	if err != nil {
		d.slab.Remove(h)
		if errors.Is(err, readiness.ErrDriverClosed) {
			return 0, nil, err
		}
		return 0, nil, os.NewSyscallError("kevent", err)
	}
	return h, io, nil
}

// errSlotInUse is returned by register for a descriptor that is already
// registered, which would mean a descriptor was closed behind the
// driver's back.
var errSlotInUse = errors.New("kqueue: descriptor already registered")

// dropChanges removes the queued changes of fd, which is about to be
// closed: submitted after the close, they would register whatever
// descriptor reused the number.
func (d *Driver) dropChanges(fd int) {
	d.chMu.Lock()
	d.changes = slices.DeleteFunc(d.changes, func(c kevent) bool { return int(c.Ident) == fd })
	d.chMu.Unlock()
}

// lookup returns h's IO or the error of a stale handle.
func (d *Driver) lookup(h core.Handle) (*readiness.IO, error) {
	if io := d.slab.Get(h); io != nil {
		return io, nil
	}
	if d.closed.Load() {
		return nil, readiness.ErrDriverClosed
	}
	return nil, readiness.ErrClosed
}

// CloseHandle unregisters h, wakes every operation pending on it with
// net.ErrClosed and closes the descriptor (at once, or when the last system
// call using it returns); closing it deletes its knotes. A Unix
// listener's socket file is removed.
func (d *Driver) CloseHandle(h core.Handle) error {
	io := d.slab.Remove(h)
	if io == nil {
		_, err := d.lookup(h)
		return err
	}
	io.MarkClosed()
	wakers := io.WakeAll(nil)
	d.dropChanges(io.FD.N())
	io.Release()
	for _, w := range wakers {
		w.Wake()
	}
	return nil
}

// Quiescent reports whether no descriptor is registered
// (core.QuiescentDriver): a Park could end only through Unpark or its
// timeout.
func (d *Driver) Quiescent() bool { return d.slab.Len() == 0 }

// OnActive sets the function called when the first descriptor is
// registered after none was (core.QuiescentDriver). It runs on the
// registering goroutine before the descriptor's filters are queued.
func (d *Driver) OnActive(fn func()) { d.slab.OnActive(fn) }

// Handles returns the number of registered handles. Tests use it to check
// that nothing stays registered.
func (d *Driver) Handles() int { return d.slab.Len() }

// registry is the Driver as the shared operations see it
// (readiness.Registry), without widening the Driver's API.
type registry Driver

func (r *registry) Closed() bool                                { return r.closed.Load() }
func (r *registry) Lookup(h core.Handle) (*readiness.IO, error) { return (*Driver)(r).lookup(h) }
func (r *registry) CloseHandle(h core.Handle) error             { return (*Driver)(r).CloseHandle(h) }
func (r *registry) CloseFD(fd int)                              { r.closeFn(fd) }
func (r *registry) Register(fd int, kind readiness.Kind, network string, initial uint64) (core.Handle, *readiness.IO, error) {
	return (*Driver)(r).register(fd, kind, network, initial)
}

var _ core.Driver = (*Driver)(nil)
var _ core.VectoredIO = (*Driver)(nil)
var _ core.DatagramIO = (*Driver)(nil)
var _ core.QuiescentDriver = (*Driver)(nil)
