//go:build linux

package epoll

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/readiness"
	"github.com/weftrt/weft/drivers/internal/slab"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// Park states, for Unpark's shortcut (see Unpark).
const (
	parkIdle uint32 = iota
	parkWaiting
	parkDispatching
)

// wakeToken is the epoll token of the driver's eventfd. No handle is zero.
const wakeToken = 0

// Driver is the epoll driver. Create it with New; it implements
// core.Driver, core.VectoredIO, core.DatagramIO and core.QuiescentDriver.
// Every method may be called from any goroutine; Park calls are
// serialised.
type Driver struct {
	// Ops is the socket and I/O operations, shared with drivers/kqueue
	// (package drivers/internal/readiness): everything but Park, Unpark,
	// CloseHandle and Close.
	readiness.Ops

	epfd int
	// wake is the eventfd that Unpark writes to interrupt epoll_wait. It
	// is reference-counted like a handle's descriptor, so an Unpark
	// racing with Close never writes to a closed (or reused) number.
	wake readiness.FD
	// slab holds the registrations. Its count is the core.QuiescentDriver
	// state: a descriptor is counted (and the activation hook run) before
	// it joins the epoll set, so a scheduler woken by the hook parks in
	// time for the first edge.
	slab *slab.Slab[readiness.IO, *readiness.IO]

	// parkMu serialises Park and Close; the fields below it belong to
	// whoever holds it.
	parkMu sync.Mutex
	events []unix.EpollEvent
	tick   uint16
	wakers []core.Waker
	// lastGosched is when Park last passed through Go's scheduler (see
	// refreshSchedTick).
	lastGosched time.Time

	// state says whether a Park is waiting in epoll_wait or dispatching
	// what it returned. Park stores it; Unpark loads it (see Unpark).
	state atomic.Uint32
	// unparkPending is set by the Unpark that writes the eventfd and
	// cleared by the Park that reads it, so a burst of Unparks costs one
	// write. Park reads (drains) the eventfd first and clears the flag
	// after. The other order loses every later wake-up: an Unpark between
	// the clear and the read would set the flag and write, the read would
	// swallow that write, and the flag would stay set with no event
	// behind it, so every later Unpark would see it set and do nothing.
	// In this order an Unpark between the read and the clear sees the
	// flag still set and writes nothing, which is safe because this Park
	// is about to return and its caller re-checks for work published
	// before that Unpark; an Unpark after the clear writes a fresh event.
	unparkPending atomic.Bool
	closed        atomic.Bool
}

// New creates an epoll instance with an event buffer of events entries
// (1024 when events < 1) and its eventfd.
func New(events int) (*Driver, error) {
	if events < 1 {
		events = DefaultEvents
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll: %w", os.NewSyscallError("epoll_create1", err))
	}
	efd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: %w", os.NewSyscallError("eventfd", err))
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET}
	setToken(&ev, wakeToken)
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &ev); err != nil {
		unix.Close(efd)
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: %w", os.NewSyscallError("epoll_ctl", err))
	}
	d := &Driver{
		epfd:   epfd,
		slab:   slab.New[readiness.IO](),
		events: make([]unix.EpollEvent, events),
	}
	d.Ops = readiness.NewOps((*registry)(d), "epoll", sockets.ListenBacklog())
	d.wake.Init(efd, closeFD)
	return d, nil
}

func setToken(ev *unix.EpollEvent, tok uint64) {
	ev.Fd = int32(uint32(tok))
	ev.Pad = int32(uint32(tok >> 32))
}

func tokenOf(ev *unix.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// Park waits at most timeout for events (negative: until one arrives or
// Unpark; zero: poll) and wakes the operations they unblock. Timeouts are
// rounded up to whole milliseconds, epoll_wait's resolution, so a park never
// returns before a timer deadline it was computed from.
func (d *Driver) Park(timeout time.Duration) error {
	d.parkMu.Lock()
	defer d.parkMu.Unlock()
	if d.closed.Load() {
		return readiness.ErrDriverClosed
	}
	if timeout == 0 && !d.unparkPending.Load() && d.slab.Len() == 0 {
		// A poll with no descriptor registered and no wake-up written
		// could only return nothing: skip the system call. Schedulers poll
		// the driver every event interval, and a runtime that does no I/O
		// should not pay for it. A descriptor registered while this check
		// runs loses nothing: its edge waits in epoll's ready list for the
		// next Park.
		return nil
	}
	if timeout != 0 {
		d.refreshSchedTick()
	}
	d.state.Store(parkWaiting)
	n, err := unix.EpollWait(d.epfd, d.events, millis(timeout))
	d.state.Store(parkDispatching)
	defer d.state.Store(parkIdle)
	if err != nil {
		if errors.Is(err, unix.EINTR) {
			return nil // a signal; the caller re-parks if it must
		}
		return fmt.Errorf("epoll: %w", os.NewSyscallError("epoll_wait", err))
	}
	d.tick++
	for i := range n {
		ev := &d.events[i]
		tok := tokenOf(ev)
		if tok == wakeToken {
			d.drainWake()
			if testHookWakeDrained != nil {
				testHookWakeDrained(d)
			}
			d.unparkPending.Store(false) // after the drain: see unparkPending
			continue
		}
		io := d.slab.Get(core.Handle(tok))
		if io == nil {
			continue // closed since the kernel queued the event
		}
		ready := readinessOf(ev.Events)
		io.SetReadiness(d.tick, ready)
		d.wakers = io.Wake(ready, d.wakers)
	}
	for i, w := range d.wakers {
		w.Wake()
		d.wakers[i] = nil
	}
	d.wakers = d.wakers[:0]
	return nil
}

// refreshSchedTick passes through Go's scheduler (runtime.Gosched) if the
// parking goroutine has not for schedTickRefresh.
//
// Why: a scheduler worker runs tasks in a loop that never returns to Go's
// scheduler, and Go's sysmon treats a goroutine that has not been
// rescheduled for 10 ms as a hog; when it finds such a goroutine in a
// system call, it takes its P away (proc.go, retake: sysretake) and hands
// it to another thread. Parked in epoll_wait, the worker would lose its P
// on nearly every park and pay for it on the way out (waking sysmon,
// starting and stopping threads): measured, about a third more CPU per
// echoed message. One Gosched every few milliseconds resets the count.
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

// readinessOf translates epoll event bits to readiness bits.
func readinessOf(events uint32) uint64 {
	var r uint64
	if events&(unix.EPOLLIN|unix.EPOLLPRI) != 0 {
		r |= readiness.Readable
	}
	if events&unix.EPOLLOUT != 0 {
		r |= readiness.Writable
	}
	if events&unix.EPOLLRDHUP != 0 {
		r |= readiness.ReadClosed | readiness.Readable
	}
	if events&unix.EPOLLHUP != 0 {
		r |= readiness.ReadClosed | readiness.WriteClosed | readiness.Readable | readiness.Writable
	}
	if events&unix.EPOLLERR != 0 {
		r |= readiness.Errored | readiness.Readable | readiness.Writable
	}
	return r
}

// millis converts a park timeout to epoll_wait's milliseconds, rounding up.
func millis(d time.Duration) int {
	switch {
	case d < 0:
		return -1
	case d == 0:
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(ms)
}

func (d *Driver) drainWake() {
	if !d.wake.Acquire() {
		return
	}
	var buf [8]byte
	_, _ = unix.Read(d.wake.N(), buf[:])
	d.wake.Release()
}

// testHookWakeDrained, when set by a test, runs in Park between draining
// the eventfd and clearing unparkPending.
var testHookWakeDrained func(*Driver)

// Unpark makes the current or next Park return promptly. It costs nothing
// while a Park is dispatching events (that Park is about to return, and
// the caller's re-check after it returns sees whatever the unparker
// published before calling Unpark) and one eventfd write per burst
// otherwise.
func (d *Driver) Unpark() {
	if d.state.Load() == parkDispatching || d.unparkPending.Swap(true) {
		return
	}
	if !d.wake.Acquire() {
		return
	}
	var one [8]byte
	binary.NativeEndian.PutUint64(one[:], 1)
	_, _ = unix.Write(d.wake.N(), one[:])
	d.wake.Release()
}

// closeFD closes a registered descriptor (or the eventfd) once no system
// call uses it.
func closeFD(fd int) { unix.Close(fd) }

// Close fails every pending operation with an error matching
// core.ErrDriverClosed and net.ErrClosed, closes every descriptor the
// driver registered, then the eventfd and the epoll instance. It waits for
// a Park in progress to return. Calling it again does nothing.
func (d *Driver) Close() error {
	if !d.closed.CompareAndSwap(false, true) {
		return nil
	}
	d.Unpark()
	d.parkMu.Lock()
	defer d.parkMu.Unlock()
	var wakers []core.Waker
	for _, io := range d.slab.CloseAll() {
		io.MarkShutdown()
		wakers = io.WakeAll(wakers)
		io.Release()
	}
	for _, w := range wakers {
		w.Wake()
	}
	d.wake.BeginClose()
	if err := unix.Close(d.epfd); err != nil {
		return fmt.Errorf("epoll: %w", os.NewSyscallError("close", err))
	}
	return nil
}

// register adds fd to the epoll set, edge-triggered for both directions,
// with initial readiness bits. On failure the caller still owns fd.
func (d *Driver) register(fd int, kind readiness.Kind, network string, initial uint64) (core.Handle, *readiness.IO, error) {
	io := readiness.NewIO(fd, closeFD, kind, network, initial)
	h, ok := d.slab.Insert(io)
	if !ok {
		return 0, nil, readiness.ErrDriverClosed
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET}
	setToken(&ev, uint64(h))
	if err := unix.EpollCtl(d.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		d.slab.Remove(h)
		return 0, nil, os.NewSyscallError("epoll_ctl", err)
	}
	return h, io, nil
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
// call using it returns). A Unix listener's socket file is removed.
func (d *Driver) CloseHandle(h core.Handle) error {
	io := d.slab.Remove(h)
	if io == nil {
		_, err := d.lookup(h)
		return err
	}
	io.MarkClosed()
	wakers := io.WakeAll(nil)
	_ = unix.EpollCtl(d.epfd, unix.EPOLL_CTL_DEL, io.FD.N(), nil)
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
// registering goroutine before the descriptor joins the epoll set.
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
func (r *registry) CloseFD(fd int)                              { unix.Close(fd) }
func (r *registry) Register(fd int, kind readiness.Kind, network string, initial uint64) (core.Handle, *readiness.IO, error) {
	return (*Driver)(r).register(fd, kind, network, initial)
}

var _ core.Driver = (*Driver)(nil)
var _ core.VectoredIO = (*Driver)(nil)
var _ core.DatagramIO = (*Driver)(nil)
var _ core.QuiescentDriver = (*Driver)(nil)
