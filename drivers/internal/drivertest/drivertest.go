// Package drivertest holds the unit tests that the readiness drivers
// (epoll, and kqueue over its emulation) share: the waiter lists, wake-ups,
// closing, stale handles and argument errors, driven through a Subject
// that builds the driver and registers raw descriptors with it. The
// end-to-end behaviours every driver must have are conformance's
// driver suite; these look at the readiness machinery underneath.
package drivertest

import (
	"errors"
	"net"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/readiness"
)

// Driver is what the tests use of a readiness driver.
type Driver interface {
	core.QuiescentDriver
	core.DatagramIO
	// Handles returns the number of open handles.
	Handles() int
}

// Subject adapts a driver to the tests.
type Subject struct {
	// New builds a driver closed when the test ends.
	New func(t *testing.T) Driver
	// Pair registers one end of a non-blocking Unix stream pair with d
	// and returns its handle and the other end's raw descriptor, closed
	// when the test ends.
	Pair func(t *testing.T, d Driver) (core.Handle, int)
	// IO returns the readiness record of h.
	IO func(d Driver, h core.Handle) *readiness.IO
}

// Run runs every shared test on s, each as a subtest.
func Run(t *testing.T, s Subject) {
	t.Run("DroppingAPendingReadRemovesItsWaiter", func(t *testing.T) { testDroppingAPendingReadRemovesItsWaiter(t, s) })
	t.Run("AReadWokenByAnEventGetsTheBytes", func(t *testing.T) { testAReadWokenByAnEventGetsTheBytes(t, s) })
	t.Run("ClosingAHandleWakesItsPendingOperationsWithErrClosed", func(t *testing.T) { testClosingAHandleWakesItsPendingOperationsWithErrClosed(t, s) })
	t.Run("ClosingTheDriverFailsPendingOperationsAndLaterCalls", func(t *testing.T) { testClosingTheDriverFailsPendingOperationsAndLaterCalls(t, s) })
	t.Run("AStaleHandleFailsWithErrClosedEvenAfterItsSlotIsReused", func(t *testing.T) { testAStaleHandleFailsWithErrClosedEvenAfterItsSlotIsReused(t, s) })
	t.Run("UnknownOptionsNetworksAndDirectionsAreClearErrors", func(t *testing.T) { testUnknownOptionsNetworksAndDirectionsAreClearErrors(t, s) })
	t.Run("QuiescentExactlyWhileNothingIsRegistered", func(t *testing.T) { testQuiescentExactlyWhileNothingIsRegistered(t, s) })
}

// testQuiescentExactlyWhileNothingIsRegistered checks core.QuiescentDriver:
// every registration counts, failed ones and closed ones do not, and the
// hook runs once per transition from quiescent, when Quiescent already
// reports false.
func testQuiescentExactlyWhileNothingIsRegistered(t *testing.T, s Subject) {
	d := s.New(t)
	var hooks int
	d.OnActive(func() {
		if d.Quiescent() {
			t.Error("the activation hook ran while the driver still reported quiescent")
		}
		hooks++
	})
	if !d.Quiescent() {
		t.Fatal("a new driver is not quiescent")
	}
	h1, _ := s.Pair(t, d)
	if d.Quiescent() || hooks != 1 {
		t.Fatalf("after one registration: quiescent %v, %d hook calls", d.Quiescent(), hooks)
	}
	lh, addr, err := d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if hooks != 1 {
		t.Fatalf("a second registration ran the hook again (%d calls)", hooks)
	}
	// A refused registration counts nothing: the port is taken.
	if _, _, err := d.Listen("tcp", addr.String(), core.SocketOptions{}); err == nil {
		t.Fatal("listening twice on one port succeeded")
	}
	for _, h := range []core.Handle{h1, lh} {
		if d.Quiescent() {
			t.Fatal("quiescent with a handle still registered")
		}
		if err := d.CloseHandle(h); err != nil {
			t.Fatal(err)
		}
	}
	if !d.Quiescent() {
		t.Fatal("not quiescent after every handle closed")
	}
	s.Pair(t, d)
	if d.Quiescent() || hooks != 2 {
		t.Fatalf("registering again: quiescent %v, %d hook calls, want 2", d.Quiescent(), hooks)
	}
	d.OnActive(nil)
}

// ChanWaker is a core.Waker that signals its channel, without blocking,
// when woken.
type ChanWaker chan struct{}

// Wake implements core.Waker.
func (c ChanWaker) Wake() {
	select {
	case c <- struct{}{}:
	default:
	}
}

func testDroppingAPendingReadRemovesItsWaiter(t *testing.T, s Subject) {
	d := s.New(t)
	h, _ := s.Pair(t, d)
	io := s.IO(d, h)
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

func testAReadWokenByAnEventGetsTheBytes(t *testing.T, s Subject) {
	d := s.New(t)
	h, peer := s.Pair(t, d)
	woken := make(ChanWaker, 1)
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

func testClosingAHandleWakesItsPendingOperationsWithErrClosed(t *testing.T, s Subject) {
	d := s.New(t)
	h, _ := s.Pair(t, d)
	woken := make(ChanWaker, 1)
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

func testClosingTheDriverFailsPendingOperationsAndLaterCalls(t *testing.T, s Subject) {
	d := s.New(t)
	h, _ := s.Pair(t, d)
	woken := make(ChanWaker, 1)
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

func testAStaleHandleFailsWithErrClosedEvenAfterItsSlotIsReused(t *testing.T, s Subject) {
	d := s.New(t)
	old, _ := s.Pair(t, d)
	if err := d.CloseHandle(old); err != nil {
		t.Fatal(err)
	}
	fresh, _ := s.Pair(t, d)
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

func testUnknownOptionsNetworksAndDirectionsAreClearErrors(t *testing.T, s Subject) {
	d := s.New(t)
	h, _ := s.Pair(t, d)
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
