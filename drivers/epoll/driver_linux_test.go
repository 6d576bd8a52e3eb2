//go:build linux

package epoll

import (
	"errors"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/drivertest"
	"github.com/weftrt/weft/drivers/internal/readiness"
)

func newTestDriver(t *testing.T) *Driver {
	t.Helper()
	d, err := New(64)
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

func TestParkTimeoutsRoundUpToWholeMilliseconds(t *testing.T) {
	for _, c := range []struct {
		in   time.Duration
		want int
	}{{-1, -1}, {0, 0}, {1, 1}, {time.Millisecond, 1}, {1500 * time.Microsecond, 2}, {1 << 62, 1<<31 - 1}} {
		if got := millis(c.in); got != c.want {
			t.Errorf("millis(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestAHangUpMakesBothDirectionsReadyAndClosed(t *testing.T) {
	r := readinessOf(unix.EPOLLHUP)
	if r&readiness.InterestRead == 0 || r&readiness.InterestWrite == 0 || r&readiness.ReadClosed == 0 || r&readiness.WriteClosed == 0 {
		t.Fatalf("EPOLLHUP maps to %b", r)
	}
	if r := readinessOf(unix.EPOLLIN | unix.EPOLLRDHUP); r&readiness.ReadClosed == 0 || r&readiness.Writable != 0 {
		t.Fatalf("EPOLLIN|EPOLLRDHUP maps to %b", r)
	}
}

func TestUnparkBeforeParkMakesTheParkReturn(t *testing.T) {
	d := newTestDriver(t)
	d.Unpark()
	d.Unpark() // a burst costs one eventfd write
	if err := d.Park(-1); err != nil {
		t.Fatal(err)
	}
	if d.unparkPending.Load() {
		t.Fatal("the Park that consumed the unpark left it pending")
	}
}

func TestUnparkFromAnotherGoroutineEndsABlockingPark(t *testing.T) {
	d := newTestDriver(t)
	done := make(chan error)
	go func() { done <- d.Park(-1) }()
	d.Unpark()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
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
	if errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EADDRNOTAVAIL) {
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

// An Unpark that comes while a Park is between draining the wake-up and
// clearing unparkPending (one that loaded the park state before the Park
// began dispatching, modelled by showing it parkWaiting) must not leave
// the flag set with no wake-up behind it: later Unparks must still end a
// blocking Park. With the clear before the drain, the drain swallowed that
// Unpark's wake-up and every later Unpark was silently skipped.
func TestAnUnparkRacingTheWakeDrainDoesNotSilenceLaterUnparks(t *testing.T) {
	d := newTestDriver(t)
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

// A poll (Park(0)) with nothing registered skips epoll_wait, but not when
// an Unpark has written a wake-up: that poll must consume it, or the flag
// would stay set and the next blocking Park would wake for nothing.
func TestAPollWithNothingRegisteredStillConsumesAnUnpark(t *testing.T) {
	d := newTestDriver(t)
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	d.Unpark()
	if !d.unparkPending.Load() {
		t.Fatal("Unpark did not record its wake-up")
	}
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if d.unparkPending.Load() {
		t.Fatal("the poll left the wake-up pending")
	}
}
