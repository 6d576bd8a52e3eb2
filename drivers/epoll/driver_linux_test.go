//go:build linux

package epoll

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
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

// chanWaker signals a channel, without blocking, when woken.
type chanWaker chan struct{}

func (c chanWaker) Wake() {
	select {
	case c <- struct{}{}:
	default:
	}
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

func TestDroppingAPendingReadRemovesItsWaiter(t *testing.T) {
	d := newTestDriver(t)
	h, _ := socketPair(t, d)
	io := d.slab.Get(h)
	reads := []core.Future[core.Result[int]]{d.Read(h, make([]byte, 8)), d.Read(h, make([]byte, 8))}
	for _, r := range reads {
		if _, ok := r.Poll(core.NewContext(nil)); ok {
			t.Fatal("a read with no data resolved")
		}
	}
	if io.Waiters() != 2 {
		t.Fatalf("%d waiters for two pending reads", io.Waiters())
	}
	core.Drop(reads[0])
	if io.Waiters() != 1 {
		t.Fatalf("%d waiters after dropping one of two reads", io.Waiters())
	}
	core.Drop(reads[1])
	if io.Waiters() != 0 {
		t.Fatal("a dropped read left its waiter")
	}
}

func TestAReadWokenByAnEventGetsTheBytes(t *testing.T) {
	d := newTestDriver(t)
	h, peer := socketPair(t, d)
	woken := make(chanWaker, 1)
	buf := make([]byte, 8)
	read := d.Read(h, buf)
	cx := core.NewContext(woken)
	if _, ok := read.Poll(cx); ok {
		t.Fatal("a read with no data resolved")
	}
	if _, err := unix.Write(peer, []byte("hey")); err != nil {
		t.Fatal(err)
	}
	for len(woken) == 0 {
		if err := d.Park(-1); err != nil {
			t.Fatal(err)
		}
	}
	res, ok := read.Poll(cx)
	if !ok || res.Err != nil || string(buf[:res.Value]) != "hey" {
		t.Fatalf("read after the wake = %+v, %v", res, ok)
	}
}

func TestClosingAHandleWakesItsPendingOperationsWithErrClosed(t *testing.T) {
	d := newTestDriver(t)
	h, _ := socketPair(t, d)
	woken := make(chanWaker, 1)
	read := d.Read(h, make([]byte, 8))
	cx := core.NewContext(woken)
	read.Poll(cx)
	if err := d.CloseHandle(h); err != nil {
		t.Fatal(err)
	}
	<-woken
	res, ok := read.Poll(cx)
	if !ok || !errors.Is(res.Err, net.ErrClosed) {
		t.Fatalf("pending read after CloseHandle = %+v, %v; want net.ErrClosed", res, ok)
	}
	if err := d.CloseHandle(h); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second CloseHandle = %v, want net.ErrClosed", err)
	}
	if d.Handles() != 0 {
		t.Fatal("the closed handle is still registered")
	}
}

func TestClosingTheDriverFailsPendingOperationsAndLaterCalls(t *testing.T) {
	d := newTestDriver(t)
	h, _ := socketPair(t, d)
	woken := make(chanWaker, 1)
	read := d.Read(h, make([]byte, 8))
	cx := core.NewContext(woken)
	read.Poll(cx)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	<-woken
	res, _ := read.Poll(cx)
	if !errors.Is(res.Err, core.ErrDriverClosed) || !errors.Is(res.Err, net.ErrClosed) {
		t.Fatalf("pending read after Close = %v; want core.ErrDriverClosed and net.ErrClosed", res.Err)
	}
	if err := d.Park(0); !errors.Is(err, core.ErrDriverClosed) {
		t.Fatalf("Park after Close = %v", err)
	}
	if _, _, err := d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{}); !errors.Is(err, core.ErrDriverClosed) {
		t.Fatalf("Listen after Close = %v", err)
	}
	if res, _ := d.Write(h, []byte("x")).Poll(cx); !errors.Is(res.Err, core.ErrDriverClosed) {
		t.Fatalf("Write after Close = %v", res.Err)
	}
	d.Unpark() // harmless
	if err := d.Close(); err != nil {
		t.Fatal("a second Close failed:", err)
	}
}

func TestAStaleHandleFailsWithErrClosedEvenAfterItsSlotIsReused(t *testing.T) {
	d := newTestDriver(t)
	old, _ := socketPair(t, d)
	if err := d.CloseHandle(old); err != nil {
		t.Fatal(err)
	}
	fresh, _ := socketPair(t, d)
	if uint32(fresh) != uint32(old) {
		t.Fatal("the slot was not reused; the test needs it to be")
	}
	res, _ := d.Write(old, []byte("x")).Poll(core.NewContext(nil))
	if !errors.Is(res.Err, net.ErrClosed) {
		t.Fatalf("write on the stale handle = %v, want net.ErrClosed", res.Err)
	}
	if _, err := d.LocalAddr(old); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("LocalAddr of the stale handle = %v", err)
	}
}

func TestUnknownOptionsNetworksAndDirectionsAreClearErrors(t *testing.T) {
	d := newTestDriver(t)
	h, _ := socketPair(t, d)
	if err := d.SetOption(h, core.SocketOption(200), 1); err == nil {
		t.Fatal("an unknown socket option was accepted")
	}
	if err := d.Shutdown(h, core.ShutdownHow(9)); err == nil {
		t.Fatal("an unknown shutdown direction was accepted")
	}
	var unknown net.UnknownNetworkError
	if _, _, err := d.Listen("sctp", ":0", core.SocketOptions{}); !errors.As(err, &unknown) {
		t.Fatalf("Listen on sctp = %v", err)
	}
	if _, _, err := d.Listen("udp", "127.0.0.1:0", core.SocketOptions{}); err == nil {
		t.Fatal("Listen accepted a datagram network")
	}
	if _, _, err := d.Bind("tcp", "127.0.0.1:0", core.SocketOptions{}); err == nil {
		t.Fatal("Bind accepted a stream network")
	}
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
			woken := make(chanWaker, 1)
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
