//go:build linux

// The driver over the emulation: its own protocols (registration
// batching, EV_ERROR, Unpark, closing) with system calls observed or
// refused through a wrapper of kqueueSys.

package kqueue

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/drivertest"
	"github.com/weftrt/weft/drivers/internal/readiness"
	"github.com/weftrt/weft/drivers/kqueue/internal/kqemu"
)

// newTestDriver builds the driver over the emulation, with EVFILT_USER
// for Unpark (the pipe variants name themselves).
func newTestDriver(t *testing.T) *Driver {
	t.Helper()
	return newTestDriverWith(t, true, nil)
}

// newTestDriverWith builds the driver over the emulation, through wrap
// (for fault injection) when it is not nil.
func newTestDriverWith(t *testing.T, userEvent bool, wrap func(kqueueSys) kqueueSys) *Driver {
	t.Helper()
	kq, err := kqemu.New()
	if err != nil {
		t.Fatal(err)
	}
	var sys kqueueSys = emuKqueue{kq}
	if wrap != nil {
		sys = wrap(sys)
	}
	d, err := newDriver(sys, 64, userEvent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// socketPair registers one end of a Unix stream pair with d and returns its
// handle and the other end's raw descriptor, closed at cleanup.
func socketPair(t *testing.T, d *Driver) (core.Handle, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := d.register(fds[0], readiness.Stream, "unix", 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	return h, fds[1]
}

// unparkVariants runs f with EVFILT_USER (darwin, freebsd) and with the
// pipe (netbsd, openbsd) for Unpark.
func unparkVariants(t *testing.T, f func(t *testing.T, d *Driver)) {
	for name, user := range map[string]bool{"EVFILT_USER": true, "pipe": false} {
		t.Run(name, func(t *testing.T) { f(t, newTestDriverWith(t, user, nil)) })
	}
}

func TestUnparkBeforeParkMakesTheParkReturn(t *testing.T) {
	unparkVariants(t, func(t *testing.T, d *Driver) {
		for range 3 {
			d.Unpark()
			d.Unpark() // a burst costs one system call
			if err := d.Park(-1); err != nil {
				t.Fatal(err)
			}
			if d.unparkPending.Load() {
				t.Fatal("the Park that consumed the unpark left it pending")
			}
		}
	})
}

func TestUnparkFromAnotherGoroutineEndsABlockingPark(t *testing.T) {
	unparkVariants(t, func(t *testing.T, d *Driver) {
		done := make(chan error)
		go func() { done <- d.Park(-1) }()
		d.Unpark()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("Unpark did not end the Park")
		}
	})
}

// The readiness machinery (waiter lists, wake-ups, closing, stale handles,
// argument errors), by the tests epoll and kqueue share.
func TestReadinessMachinery(t *testing.T) {
	drivertest.Run(t, drivertest.Subject{
		New: func(t *testing.T) drivertest.Driver { return newTestDriver(t) },
		Pair: func(t *testing.T, d drivertest.Driver) (core.Handle, int) {
			return socketPair(t, d.(*Driver))
		},
		IO: func(d drivertest.Driver, h core.Handle) *readiness.IO { return d.(*Driver).slab.Get(h) },
	})
}

func TestJoiningAMulticastGroupOnLoopback(t *testing.T) {
	d := newTestDriver(t)
	h, _, err := d.Bind("udp4", "0.0.0.0:0", core.SocketOptions{ReuseAddr: true})
	if err != nil {
		t.Fatal(err)
	}
	err = d.JoinGroup(h, "239.255.42.1", "lo")
	if errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EADDRNOTAVAIL) || errors.Is(err, syscall.ENOBUFS) {
		t.Skip("no multicast on the loopback interface here:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := d.JoinGroup(h, "10.0.0.1", ""); err == nil {
		t.Fatal("joining a unicast address succeeded")
	}
}

// Many goroutines run operations on their own sockets while another parks
// the driver: the situation of a multi-threaded scheduler sharing one
// driver. Under -race this checks the readiness and waiter protocols'
// synchronisation; every operation must complete.
func TestOperationsFromManyGoroutinesWhileAnotherParks(t *testing.T) {
	d := newTestDriver(t)
	const goroutines, rounds = 8, 300
	stop := make(chan struct{})
	parked := make(chan struct{})
	go func() {
		defer close(parked)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := d.Park(-1); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range goroutines {
		h, peer := socketPair(t, d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			woken := make(drivertest.ChanWaker, 1)
			cx := core.NewContext(woken)
			buf := make([]byte, 4)
			for i := range rounds {
				if _, err := unix.Write(peer, []byte{byte(i)}); err != nil {
					t.Error(err)
					return
				}
				read := d.Read(h, buf)
				for {
					res, ok := read.Poll(cx)
					if ok {
						if res.Err != nil || res.Value != 1 || buf[0] != byte(i) {
							t.Errorf("round %d read %v, %v", i, buf[:res.Value], res.Err)
							return
						}
						break
					}
					<-woken
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	d.Unpark()
	<-parked
}

// faultSys wraps the event queue: it records the changes of every kevent
// call and refuses the changes of descriptors in refuse with their errno,
// as a kernel does (EV_ERROR entries when there is an event list, the
// call's error otherwise).
type faultSys struct {
	kqueueSys
	mu      sync.Mutex
	refuse  map[int]unix.Errno
	calls   int // kevent calls with changes
	changes []kevent
	withEvs int // of which with an event list
}

func (f *faultSys) kevent(changes, events []kevent, ts *unix.Timespec) (int, error) {
	f.mu.Lock()
	var pass, refused []kevent
	if len(changes) > 0 {
		f.calls++
		if len(events) > 0 {
			f.withEvs++
		}
	}
	for _, c := range changes {
		f.changes = append(f.changes, c)
		if _, ok := f.refuse[int(c.Ident)]; ok && c.Filter != evfiltUser {
			refused = append(refused, c)
		} else {
			pass = append(pass, c)
		}
	}
	f.mu.Unlock()
	if len(refused) > 0 {
		if _, err := f.kqueueSys.kevent(pass, nil, &zeroTimespec); err != nil {
			return 0, err
		}
		errno := f.refuse[int(refused[0].Ident)]
		if len(events) == 0 {
			return 0, errno
		}
		n := 0
		for _, c := range refused {
			if n < len(events) {
				c.Flags |= evError
				c.Data = int64(f.refuse[int(c.Ident)])
				events[n] = c
				n++
			}
		}
		return n, nil
	}
	return f.kqueueSys.kevent(pass, events, ts)
}

func (f *faultSys) submitted(fd int) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.changes {
		if int(c.Ident) == fd && c.Filter != evfiltUser {
			n++
		}
	}
	return n
}

func withFaults(refuse map[int]unix.Errno) (*faultSys, func(kqueueSys) kqueueSys) {
	f := &faultSys{refuse: refuse}
	return f, func(s kqueueSys) kqueueSys { f.kqueueSys = s; return f }
}

func rawPair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func TestARegistrationWhileNoParkWaitsIsSubmittedByTheNextParksCall(t *testing.T) {
	f, wrap := withFaults(nil)
	d := newTestDriverWith(t, true, wrap)
	fd, peer := rawPair(t)
	h, _, err := d.register(fd, readiness.Stream, "unix", 0)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.submitted(fd); n != 0 {
		t.Fatalf("register made its own kevent call (%d changes) with no Park waiting", n)
	}
	woken := make(drivertest.ChanWaker, 1)
	cx := core.NewContext(woken)
	buf := make([]byte, 8)
	read := d.Read(h, buf)
	if _, ok := read.Poll(cx); ok {
		t.Fatal("a read with no data resolved")
	}
	if _, err := unix.Write(peer, []byte("hi")); err != nil {
		t.Fatal(err)
	}
	calls := f.withEvs
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if f.submitted(fd) != 2 || f.withEvs != calls+1 {
		t.Fatalf("Park submitted %d changes for the descriptor in %d calls with events, want 2 in one", f.submitted(fd), f.withEvs-calls)
	}
	// The filter was added after the bytes arrived: the kernel (and the
	// emulation) evaluates it when it is added, so the event is there.
	select {
	case <-woken:
	default:
		t.Fatal("the read was not woken by the event that came with the submission")
	}
	if res, ok := read.Poll(cx); !ok || res.Err != nil || string(buf[:res.Value]) != "hi" {
		t.Fatalf("read = %+v, %v", res, ok)
	}
}

func TestARegistrationWhileAParkWaitsIsSubmittedAtOnceAndWakesIt(t *testing.T) {
	f, wrap := withFaults(nil)
	d := newTestDriverWith(t, true, wrap)
	parked := make(chan error, 1)
	go func() { parked <- d.Park(-1) }()
	waitFor(t, "the Park to block", func() bool { return d.state.Load() == parkWaiting })
	fd, peer := rawPair(t)
	if _, err := unix.Write(peer, []byte("x")); err != nil {
		t.Fatal(err)
	}
	h, _, err := d.register(fd, readiness.Stream, "unix", 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.submitted(fd) != 2 {
		t.Fatalf("register queued its changes while a Park waited (%d submitted)", f.submitted(fd))
	}
	select {
	case err := <-parked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a knote active when added did not end the blocked Park")
	}
	if d.slab.Get(h).Readiness()&readiness.Readable == 0 {
		t.Fatal("the Park that ended did not record the readiness")
	}
}

func TestARefusedRegistrationFailsItsOperationsWithTheKernelsErrno(t *testing.T) {
	fd, _ := rawPair(t)
	_, wrap := withFaults(map[int]unix.Errno{fd: unix.ENOMEM})
	d := newTestDriverWith(t, true, wrap)
	h, _, err := d.register(fd, readiness.Stream, "unix", 0)
	if err != nil {
		t.Fatal(err)
	}
	woken := make(drivertest.ChanWaker, 1)
	cx := core.NewContext(woken)
	read := d.Read(h, make([]byte, 8))
	if _, ok := read.Poll(cx); ok {
		t.Fatal("a read with no data resolved")
	}
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	<-woken
	res, ok := read.Poll(cx)
	var se *os.SyscallError
	if !ok || !errors.Is(res.Err, syscall.ENOMEM) || !errors.As(res.Err, &se) || se.Syscall != "kevent" {
		t.Fatalf("read after a refused registration = %+v, %v; want *os.SyscallError(kevent, ENOMEM)", res, ok)
	}
	if res, _ := d.Write(h, []byte("x")).Poll(cx); !errors.Is(res.Err, syscall.ENOMEM) {
		t.Fatalf("a later write = %v, want ENOMEM", res.Err)
	}
	if err := d.CloseHandle(h); err != nil {
		t.Fatal(err)
	}
}

func TestARegistrationRefusedWhileAParkWaitsFailsRegisterWithTheErrno(t *testing.T) {
	fd, _ := rawPair(t)
	_, wrap := withFaults(map[int]unix.Errno{fd: unix.EBADF})
	d := newTestDriverWith(t, true, wrap)
	parked := make(chan error, 1)
	go func() { parked <- d.Park(-1) }()
	waitFor(t, "the Park to block", func() bool { return d.state.Load() == parkWaiting })
	_, _, err := d.register(fd, readiness.Stream, "unix", 0)
	var se *os.SyscallError
	if !errors.Is(err, syscall.EBADF) || !errors.As(err, &se) || se.Syscall != "kevent" {
		t.Fatalf("register = %v, want *os.SyscallError(kevent, EBADF)", err)
	}
	if d.Handles() != 0 {
		t.Fatal("the refused descriptor stayed registered")
	}
	unix.Close(fd)
	d.Unpark()
	<-parked
}

func TestClosingAHandleDropsItsQueuedChanges(t *testing.T) {
	f, wrap := withFaults(nil)
	d := newTestDriverWith(t, true, wrap)
	fd, _ := rawPair(t)
	h, _, err := d.register(fd, readiness.Stream, "unix", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.CloseHandle(h); err != nil {
		t.Fatal(err)
	}
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if n := f.submitted(fd); n != 0 {
		t.Fatalf("%d changes of a closed descriptor were submitted (its number may be reused)", n)
	}
}

// waitFor polls cond until it holds; the limit only turns a hang into a
// failure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// An Unpark that comes while a Park is between draining the wake-up and
// clearing unparkPending (one that loaded the park state before the Park
// began dispatching, modelled by showing it parkWaiting) must not leave
// the flag set with no wake-up behind it: later Unparks must still end a
// blocking Park. With the clear before the drain, the drain swallowed that
// Unpark's wake-up and every later Unpark was silently skipped.
func TestAnUnparkRacingTheWakeDrainDoesNotSilenceLaterUnparksWithThePipe(t *testing.T) {
	d := newTestDriverWith(t, false, nil) // the pipe: EVFILT_USER has no drain
	testHookWakeDrained = func(d *Driver) {
		d.state.Store(parkWaiting)
		d.Unpark()
		d.state.Store(parkDispatching)
	}
	defer func() { testHookWakeDrained = nil }()
	d.Unpark()
	if err := d.Park(-1); err != nil {
		t.Fatal(err)
	}
	testHookWakeDrained = nil

	done := make(chan error, 1)
	go func() { done <- d.Park(-1) }()
	for range 3 {
		d.Unpark()
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(time.Second):
			// The Park may not have begun waiting yet: Unpark again.
		}
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a blocking Park ignored every Unpark after the race")
	}
}
