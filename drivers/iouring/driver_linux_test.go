//go:build linux

package iouring

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// These tests drive the driver by hand: futures are polled with a
// Context outside any runtime and the test calls Park itself, so the
// order of submission, completion, reaping and Drop is the test's to
// choose. A bounded loop of Parks (parkUntil) replaces any sleep.

func newTestDriver(t *testing.T, o Options) *Driver {
	t.Helper()
	d, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// socketPair registers one end of a Unix stream pair with d and returns
// its handle and the other end's raw descriptor, closed at cleanup.
func socketPair(t *testing.T, d *Driver) (core.Handle, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := d.register(fds[0], kindStream, "unix")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[1]) })
	return h, fds[1]
}

// countWaker counts its wakes.
type countWaker struct{ n atomic.Int64 }

func (w *countWaker) Wake() { w.n.Add(1) }

// pollOnce polls f once with w.
func pollOnce[T any](f core.Future[T], w core.Waker) (T, bool) {
	return f.Poll(core.NewContext(w))
}

// parkUntil parks (10 ms at a time) until cond holds; a watchdog of 10 s
// turns a hang into a failure.
func parkUntil(t *testing.T, d *Driver, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		if err := d.Park(10 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
}

// await polls f, parking in between, until it resolves.
func await[T any](t *testing.T, d *Driver, f core.Future[T]) T {
	t.Helper()
	var v T
	var ok bool
	parkUntil(t, d, "a future resolves", func() bool {
		v, ok = pollOnce(f, core.NoopWaker)
		return ok
	})
	return v
}

func TestDroppingAReadTheKernelHoldsCancelsItAndNothingIsWritten(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	w := &countWaker{}
	buf := make([]byte, 8)
	f := d.Read(h, buf)
	if _, ok := pollOnce(f, w); ok {
		t.Fatal("a read with nothing to read resolved")
	}
	// Submit it: the kernel now holds the request, waiting for data.
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if d.InFlight() != 1 {
		t.Fatalf("in flight: %d, want 1", d.InFlight())
	}
	core.Drop(f)
	parkUntil(t, d, "the cancelled read's completion is reaped", func() bool { return d.InFlight() == 0 })
	if d.cancelHit.Load() != 1 || d.cancelMiss.Load() != 0 {
		t.Fatalf("cancels found %d, missed %d; want the one to find the read", d.cancelHit.Load(), d.cancelMiss.Load())
	}
	if _, err := unix.Write(peer, []byte("after")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 5)
	r := await(t, d, d.Read(h, got))
	if r.Err != nil || string(got[:r.Value]) != "after" {
		t.Fatalf("read after the drop: %q, %v", got[:r.Value], r.Err)
	}
	if !bytes.Equal(buf, make([]byte, 8)) {
		t.Fatalf("the dropped read's buffer was written: %q", buf)
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("the dropped read's waker was woken %d times", n)
	}
}

func TestAReadDroppedWithItsCompletionInTheCQKeepsItsBytesForTheNextRead(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	if _, err := unix.Write(peer, []byte("kept")); err != nil {
		t.Fatal(err)
	}
	w := &countWaker{}
	buf := make([]byte, 8)
	f := d.Read(h, buf)
	if _, ok := pollOnce(f, w); ok {
		t.Fatal("the read resolved before it was submitted")
	}
	// Submit without reaping: the data is there, so the kernel completes
	// the read inline and its CQE waits in the CQ.
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	if !d.cqReady() {
		t.Fatal("no completion in the CQ after submitting a read with data waiting")
	}
	// The drop comes after the completion: its cancel fails (ENOENT), and
	// the Drop reaps the completion itself before it returns.
	core.Drop(f)
	if d.InFlight() != 0 {
		t.Fatalf("Drop returned with %d operations in flight; it settles the read first", d.InFlight())
	}
	parkUntil(t, d, "the cancel's completion is reaped", func() bool { return d.cancelMiss.Load() == 1 })
	if d.cancelHit.Load() != 0 {
		t.Fatal("the cancel found a read that had completed")
	}
	if n := w.n.Load(); n != 0 {
		t.Fatalf("the dropped read's waker was woken %d times", n)
	}
	// Its bytes were consumed from the socket and kept: the next read
	// gets them, and the one after that what comes next.
	if _, err := unix.Write(peer, []byte("next")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 8)
	r := await(t, d, d.Read(h, got))
	if r.Err != nil || string(got[:r.Value]) != "kept" {
		t.Fatalf("read after the dropped one: %q, %v; want its bytes", got[:r.Value], r.Err)
	}
	r = await(t, d, d.Read(h, got))
	if r.Err != nil || string(got[:r.Value]) != "next" {
		t.Fatalf("the read after that: %q, %v", got[:r.Value], r.Err)
	}
}

// listenTCP returns a listener handle on a loopback port and its address.
func listenTCP(t *testing.T, d *Driver) (core.Handle, string) {
	t.Helper()
	h, addr, err := d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.CloseHandle(h) })
	return h, addr.Addr
}

// dialAndExpectEOF connects a Go client to addr and returns a function
// that checks the server closed its end (the client reads EOF).
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func expectEOF(t *testing.T, c net.Conn) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a watchdog, not a verdict
	n, err := c.Read(make([]byte, 1))
	if n != 0 || !errors.Is(err, io.EOF) {
		t.Fatalf("the client read %d bytes, %v; want EOF (the abandoned connection closed)", n, err)
	}
}

func TestAnAcceptDroppedWithItsCompletionInTheCQClosesTheConnection(t *testing.T) {
	d := newTestDriver(t, Options{})
	ln, addr := listenTCP(t, d)
	c := dial(t, addr)
	w := &countWaker{}
	f := d.Accept(ln)
	if _, ok := pollOnce(f, w); ok {
		t.Fatal("the accept resolved before it was submitted")
	}
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	if !d.cqReady() {
		t.Fatal("no completion in the CQ after submitting an accept with a connection queued")
	}
	core.Drop(f)
	parkUntil(t, d, "the accept's completion is reaped", func() bool { return d.InFlight() == 0 })
	parkUntil(t, d, "the failed cancel's completion is reaped", func() bool { return d.cancelMiss.Load() == 1 })
	expectEOF(t, c)
	if w.n.Load() != 0 || d.Handles() != 1 {
		t.Fatalf("wakes %d, handles %d (want 0 and the listener's 1)", w.n.Load(), d.Handles())
	}
}

func TestAnAcceptDroppedAfterItsCompletionWasReapedClosesTheConnection(t *testing.T) {
	d := newTestDriver(t, Options{})
	ln, addr := listenTCP(t, d)
	c := dial(t, addr)
	w := &countWaker{}
	f := d.Accept(ln)
	pollOnce(f, w)
	parkUntil(t, d, "the accept completes", func() bool { return w.n.Load() > 0 })
	// Completed and its task woken, but the future is dropped instead of
	// polled (a select chose another branch).
	core.Drop(f)
	expectEOF(t, c)
}

func TestAnAcceptDroppedBeforeAConnectionArrivesTakesNone(t *testing.T) {
	d := newTestDriver(t, Options{})
	ln, addr := listenTCP(t, d)
	f := d.Accept(ln)
	pollOnce(f, core.NoopWaker)
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	core.Drop(f)
	parkUntil(t, d, "the cancelled accept's completion is reaped", func() bool { return d.InFlight() == 0 })
	c := dial(t, addr)
	r := await(t, d, d.Accept(ln))
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	defer d.CloseHandle(r.Value.Handle)
	if r.Value.Peer.Addr != c.LocalAddr().String() {
		t.Fatalf("accepted %v, want the client %v", r.Value.Peer, c.LocalAddr())
	}
}

func TestClosingAHandleFailsACompletedButUntakenAcceptAndClosesItsConnection(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, addr, err := d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, addr.Addr)
	w := &countWaker{}
	f := d.Accept(h)
	pollOnce(f, w)
	parkUntil(t, d, "the accept completes", func() bool { return w.n.Load() > 0 })
	if err := d.CloseHandle(h); err != nil {
		t.Fatal(err)
	}
	r, ok := pollOnce(f, w)
	if !ok || !errors.Is(r.Err, net.ErrClosed) {
		t.Fatalf("accept after its listener closed: %v, %v; want net.ErrClosed", ok, r.Err)
	}
	expectEOF(t, c)
	if d.Handles() != 0 {
		t.Fatalf("%d handles left", d.Handles())
	}
}

func TestClosingAHandleFailsItsPendingOperationsAndCancelsThem(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, _ := socketPair(t, d)
	w := &countWaker{}
	var fs []core.Future[core.Result[int]]
	for range 3 {
		f := d.Read(h, make([]byte, 4))
		pollOnce(f, w)
		fs = append(fs, f)
	}
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if err := d.CloseHandle(h); err != nil {
		t.Fatal(err)
	}
	if w.n.Load() != 3 {
		t.Fatalf("closing woke %d of 3 pending reads", w.n.Load())
	}
	for _, f := range fs {
		r, ok := pollOnce(f, w)
		if !ok || !errors.Is(r.Err, net.ErrClosed) {
			t.Fatalf("a read pending at close: %v, %v", ok, r.Err)
		}
	}
	parkUntil(t, d, "the cancelled reads' completions are reaped", func() bool { return d.InFlight() == 0 })
	if _, ok := pollOnce(d.Read(h, make([]byte, 1)), w); !ok {
		t.Fatal("a read on a closed handle did not fail at once")
	}
}

func TestCloseFailsEverythingWithErrDriverClosed(t *testing.T) {
	d, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, _ := socketPair(t, d)
	ln, _, err := d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{})
	if err != nil {
		t.Fatal(err)
	}
	read := d.Read(h, make([]byte, 4))
	accept := d.Accept(ln)
	pollOnce(read, core.NoopWaker)
	pollOnce(accept, core.NoopWaker)
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if d.InFlight() != 0 {
		t.Fatalf("%d operations still in flight after Close", d.InFlight())
	}
	r, ok := pollOnce(read, core.NoopWaker)
	if !ok || !errors.Is(r.Err, core.ErrDriverClosed) || !errors.Is(r.Err, net.ErrClosed) {
		t.Fatalf("read pending at Close: %v, %v", ok, r.Err)
	}
	a, ok := pollOnce(accept, core.NoopWaker)
	if !ok || !errors.Is(a.Err, core.ErrDriverClosed) {
		t.Fatalf("accept pending at Close: %v, %v", ok, a.Err)
	}
	later, ok := pollOnce(d.Read(h, make([]byte, 4)), core.NoopWaker)
	if !ok || !errors.Is(later.Err, core.ErrDriverClosed) {
		t.Fatalf("read after Close: %v, %v", ok, later.Err)
	}
	o, ok := pollOnce(d.OpenFile(filepath.Join(t.TempDir(), "x"), os.O_CREATE|os.O_RDWR, 0o600), core.NoopWaker)
	if !ok || !errors.Is(o.Err, core.ErrDriverClosed) {
		t.Fatalf("open after Close: %v, %v", ok, o.Err)
	}
	if err := d.Park(0); !errors.Is(err, core.ErrDriverClosed) {
		t.Fatalf("Park after Close: %v", err)
	}
	d.Unpark() // harmless
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestManySubmissionsGoToTheKernelInOneEnter(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	const n = 32
	var fs []core.Future[core.Result[int]]
	for range n {
		f := d.Write(h, []byte("x"))
		pollOnce(f, core.NoopWaker)
		fs = append(fs, f)
	}
	before := enterCalls.Load()
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if got := enterCalls.Load() - before; got != 1 {
		t.Fatalf("%d submissions took %d io_uring_enter calls, want 1", n, got)
	}
	for _, f := range fs {
		if r := await(t, d, f); r.Err != nil || r.Value != 1 {
			t.Fatalf("write: %d, %v", r.Value, r.Err)
		}
	}
	got := make([]byte, n+1)
	if k, err := unix.Read(peer, got); err != nil || k != n {
		t.Fatalf("the peer read %d bytes, %v; want %d", k, err, n)
	}
}

func TestAFullSubmissionQueueIsFlushedNotDropped(t *testing.T) {
	d := newTestDriver(t, Options{Entries: 2})
	const n = 64
	type pair struct {
		f    core.Future[core.Result[int]]
		buf  []byte
		peer int
	}
	var ps []pair
	for i := range n {
		h, peer := socketPair(t, d)
		p := pair{buf: make([]byte, 4), peer: peer}
		p.f = d.Read(h, p.buf)
		if _, ok := pollOnce(p.f, core.NoopWaker); ok {
			t.Fatalf("read %d resolved at once", i)
		}
		ps = append(ps, p)
	}
	for i, p := range ps {
		if _, err := unix.Write(p.peer, []byte{byte(i), 1, 2, 3}); err != nil {
			t.Fatal(err)
		}
	}
	for i, p := range ps {
		r := await(t, d, p.f)
		if r.Err != nil || r.Value != 4 || p.buf[0] != byte(i) {
			t.Fatalf("read %d: %d, %v, %v", i, r.Value, r.Err, p.buf)
		}
	}
}

func TestUnparkEndsAParkBlockedInTheKernel(t *testing.T) {
	for _, ext := range []bool{true, false} {
		d := newTestDriver(t, Options{})
		d.extArg = ext
		done := make(chan error)
		go func() { done <- d.Park(-1) }()
		// Unpark until the Park returns: an Unpark that comes before the
		// Park blocks is remembered, one that comes while it is blocked
		// submits a NOP; either way it returns.
		for returned := false; !returned; {
			d.Unpark()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				returned = true
			case <-time.After(time.Millisecond):
			}
		}
	}
}

func TestUnparkBeforeParkMakesItReturn(t *testing.T) {
	d := newTestDriver(t, Options{})
	d.Unpark()
	d.Unpark()
	if err := d.Park(-1); err != nil {
		t.Fatal(err)
	}
}

func TestParkTimesOutNoSoonerThanAskedWithAndWithoutExtArg(t *testing.T) {
	for _, ext := range []bool{true, false} {
		d := newTestDriver(t, Options{})
		d.extArg = ext
		for range 3 {
			start := time.Now()
			if err := d.Park(15 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el < 15*time.Millisecond {
				t.Fatalf("extArg=%v: Park(15ms) returned after %v", ext, el)
			}
		}
		// Without EXT_ARG each wait queued a TIMEOUT entry; a completion
		// still arrives promptly through one.
		h, peer := socketPair(t, d)
		f := d.Read(h, make([]byte, 4))
		pollOnce(f, core.NoopWaker)
		if _, err := unix.Write(peer, []byte("x")); err != nil {
			t.Fatal(err)
		}
		if r := await(t, d, f); r.Err != nil || r.Value != 1 {
			t.Fatalf("extArg=%v: read %d, %v", ext, r.Value, r.Err)
		}
	}
}

// TestParkInterruptedBySignalsStillWaitsItsTimeout sends SIGURG (the
// signal Go's runtime uses for preemption, harmless to a Go program) to
// the parked thread again and again: each one ends io_uring_enter with
// EINTR, and Park must wait again for what is left of its timeout rather
// than return early with nothing to report.
func TestParkInterruptedBySignalsStillWaitsItsTimeout(t *testing.T) {
	for _, ext := range []bool{true, false} {
		d := newTestDriver(t, Options{})
		d.extArg = ext
		tid := make(chan int)
		elapsed := make(chan time.Duration)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			tid <- unix.Gettid()
			start := time.Now()
			if err := d.Park(60 * time.Millisecond); err != nil {
				t.Error(err)
			}
			elapsed <- time.Since(start)
		}()
		thread := <-tid
		signals := 0
		for done := false; !done; {
			select {
			case el := <-elapsed:
				if el < 60*time.Millisecond {
					t.Fatalf("extArg=%v: Park(60ms) returned after %v (%d signals sent)", ext, el, signals)
				}
				done = true
			case <-time.After(500 * time.Microsecond):
				if err := unix.Tgkill(os.Getpid(), thread, unix.SIGURG); err != nil {
					t.Fatal(err)
				}
				signals++
			}
		}
		if signals == 0 {
			t.Fatalf("extArg=%v: no signal reached the parked thread", ext)
		}
	}
}

func TestFilesThroughTheRing(t *testing.T) {
	d := newTestDriver(t, Options{})
	path := filepath.Join(t.TempDir(), "f")
	o := await(t, d, d.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600))
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	h := o.Value
	if r := await(t, d, d.WriteAt(h, []byte("hello world"), 0)); r.Err != nil || r.Value != 11 {
		t.Fatalf("write at: %d, %v", r.Value, r.Err)
	}
	if r := await(t, d, d.Fsync(h)); r.Err != nil {
		t.Fatal(r.Err)
	}
	buf := make([]byte, 5)
	if r := await(t, d, d.ReadAt(h, buf, 6)); r.Err != nil || string(buf[:r.Value]) != "world" {
		t.Fatalf("read at 6: %q, %v", buf[:r.Value], r.Err)
	}
	bufs := [][]byte{make([]byte, 6), make([]byte, 5)}
	if r := await(t, d, d.Readv(h, bufs)); r.Err != nil || r.Value != 11 || string(bufs[1]) != "world" {
		t.Fatalf("readv: %d, %v, %q", r.Value, r.Err, bufs)
	}
	if r := await(t, d, d.CloseFile(h)); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r := await(t, d, d.CloseFile(h)); !errors.Is(r.Err, net.ErrClosed) {
		t.Fatalf("second close: %v", r.Err)
	}
	m := await(t, d, d.OpenFile(filepath.Join(t.TempDir(), "missing"), os.O_RDONLY, 0))
	if !errors.Is(m.Err, syscall.ENOENT) {
		t.Fatalf("open of a missing file: %v", m.Err)
	}
	if d.Handles() != 0 || d.InFlight() != 0 {
		t.Fatalf("handles %d, in flight %d", d.Handles(), d.InFlight())
	}
}

func TestAnOpenDroppedAfterTheKernelOpenedClosesTheFile(t *testing.T) {
	d := newTestDriver(t, Options{})
	before := openFDs(t)
	f := d.OpenFile(filepath.Join(t.TempDir(), "f"), os.O_CREATE|os.O_RDWR, 0o600)
	pollOnce(f, core.NoopWaker)
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	core.Drop(f)
	parkUntil(t, d, "the open's completion is reaped", func() bool { return d.InFlight() == 0 })
	if after := openFDs(t); after != before {
		t.Fatalf("%d descriptors before, %d after a dropped open", before, after)
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(ents)
}

func TestRearmReusesAResolvedReadAndRefusesAPendingOne(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	f := d.Read(h, make([]byte, 4)).(*intFuture)
	pollOnce(f, core.NoopWaker)
	if f.Rearm(make([]byte, 4)) {
		t.Fatal("a pending read was re-armed")
	}
	for i := range 3 {
		if _, err := unix.Write(peer, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if r := await(t, d, core.Future[core.Result[int]](f)); r.Err != nil || r.Value != 1 {
			t.Fatalf("read %d: %d, %v", i, r.Value, r.Err)
		}
		if !f.Rearm(make([]byte, 4)) {
			t.Fatal("a resolved read could not be re-armed")
		}
	}
	core.Drop(f)
}

func TestStaleHandlesFailWithErrClosed(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, _ := socketPair(t, d)
	if err := d.CloseHandle(h); err != nil {
		t.Fatal(err)
	}
	if err := d.CloseHandle(h); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("second close: %v", err)
	}
	if err := d.SetOption(h, core.OptRecvBuffer, 4096); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("option on a closed handle: %v", err)
	}
	r, ok := pollOnce(d.Write(h, []byte("x")), core.NoopWaker)
	if !ok || !errors.Is(r.Err, net.ErrClosed) {
		t.Fatalf("write on a closed handle: %v %v", ok, r.Err)
	}
}

// core.QuiescentDriver: the driver is quiescent exactly while no operation
// is in flight (a handle alone is not activity: the ring has nothing to
// complete for it), and the hook runs once per operation queued while
// none was, with Quiescent already false.
func TestQuiescentExactlyWhileNoOperationIsInFlight(t *testing.T) {
	d := newTestDriver(t, Options{})
	var hooks atomic.Int64
	d.OnActive(func() {
		if d.Quiescent() {
			t.Error("the activation hook ran while the driver still reported quiescent")
		}
		hooks.Add(1)
	})
	h, peer := socketPair(t, d)
	if !d.Quiescent() || hooks.Load() != 0 {
		t.Fatalf("after registering a handle: quiescent %v, %d hook calls", d.Quiescent(), hooks.Load())
	}
	r1, r2 := d.Read(h, make([]byte, 8)), d.Read(h, make([]byte, 8))
	pollOnce(r1, core.NoopWaker)
	pollOnce(r2, core.NoopWaker)
	if d.Quiescent() || hooks.Load() != 1 {
		t.Fatalf("two reads queued: quiescent %v, %d hook calls, want 1", d.Quiescent(), hooks.Load())
	}
	for _, r := range []core.Future[core.Result[int]]{r1, r2} {
		if _, err := unix.Write(peer, []byte("x")); err != nil {
			t.Fatal(err)
		}
		await(t, d, r)
	}
	parkUntil(t, d, "every completion is reaped", d.Quiescent)
	pollOnce(d.Read(h, make([]byte, 8)), core.NoopWaker)
	if d.Quiescent() || hooks.Load() != 2 {
		t.Fatalf("a read after quiescence: quiescent %v, %d hook calls, want 2", d.Quiescent(), hooks.Load())
	}
}
