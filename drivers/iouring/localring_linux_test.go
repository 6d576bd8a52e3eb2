//go:build linux

package iouring

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// These tests cover operations submitted to a ring other than their
// handle's (see op.pickRing): a per-core runtime's worker polls a future
// of a handle another worker's driver owns. home owns the handle; local
// is the polling worker's driver.

// ringWorker is a core.Worker whose driver is d.
type ringWorker struct{ d core.Driver }

func (w ringWorker) Scheduler() core.Scheduler { return nil }
func (w ringWorker) Defer(core.Waker)          {}
func (w ringWorker) Driver() core.Driver       { return w.d }
func (w ringWorker) Time() *core.Time          { return nil }

// pollOn polls f once as a task of a worker whose driver is d.
func pollOn[T any](f core.Future[T], d core.Driver, w core.Waker) (T, bool) {
	c := spi.NewWorkerContext(ringWorker{d}).Context().WithWaker(w)
	return f.Poll(&c)
}

// awaitOn polls f as a task of local's worker, parking local in between,
// until it resolves.
func awaitOn[T any](t *testing.T, local *Driver, f core.Future[T]) T {
	t.Helper()
	var v T
	var ok bool
	parkUntil(t, local, "a future resolves", func() bool {
		v, ok = pollOn(f, local, core.NoopWaker)
		return ok
	})
	return v
}

func TestAnOperationRunsOnThePollingWorkersRing(t *testing.T) {
	home := newTestDriver(t, Options{})
	local := newTestDriver(t, Options{})
	h, peer := socketPair(t, home)
	buf := make([]byte, 5)
	f := home.Read(h, buf)
	w := &countWaker{}
	if _, ok := pollOn(f, local, w); ok {
		t.Fatal("a read with nothing to read resolved")
	}
	if err := local.Park(0); err != nil {
		t.Fatal(err)
	}
	if local.InFlight() != 1 || home.InFlight() != 0 {
		t.Fatalf("in flight: local %d, home %d; want the read in the local ring", local.InFlight(), home.InFlight())
	}
	if _, err := unix.Write(peer, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	parkUntil(t, local, "the local ring reaps the read", func() bool { return w.n.Load() == 1 })
	r, ok := pollOn(f, local, w)
	if !ok || r.Err != nil || string(buf[:r.Value]) != "hello" {
		t.Fatalf("read: %v, %q, %v", ok, buf[:r.Value], r.Err)
	}

	// A file read, and a handle a foreign accept returns: registered with
	// the home, whose handle it is.
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("hello world"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := await(t, home, home.OpenFile(path, os.O_RDONLY, 0))
	if o.Err != nil {
		t.Fatal(o.Err)
	}
	if r := awaitOn(t, local, home.ReadAt(o.Value, buf, 6)); r.Err != nil || string(buf[:r.Value]) != "world" {
		t.Fatalf("read at 6: %q, %v", buf[:r.Value], r.Err)
	}
	if r := await(t, home, home.CloseFile(o.Value)); r.Err != nil {
		t.Fatal(r.Err)
	}
	ln, addr := listenTCP(t, home)
	c := dial(t, addr)
	defer c.Close()
	a := awaitOn(t, local, home.Accept(ln))
	if a.Err != nil {
		t.Fatal(a.Err)
	}
	if local.Handles() != 0 || home.Handles() != 3 {
		t.Fatalf("handles: local %d, home %d; want the connection at home", local.Handles(), home.Handles())
	}
	if _, err := c.Write([]byte("abc")); err != nil {
		t.Fatal(err)
	}
	if r := await(t, home, home.Read(a.Value.Handle, buf)); r.Err != nil || string(buf[:r.Value]) != "abc" {
		t.Fatalf("read on the accepted handle: %q, %v", buf[:r.Value], r.Err)
	}
}

func TestClosingTheHandleFailsAndCancelsItsOperationsOnAnotherRing(t *testing.T) {
	for _, submitted := range []bool{false, true} {
		home := newTestDriver(t, Options{})
		local := newTestDriver(t, Options{})
		h, _ := socketPair(t, home)
		w := &countWaker{}
		f := home.Read(h, make([]byte, 4))
		pollOn(f, local, w)
		if submitted {
			if err := local.Park(0); err != nil {
				t.Fatal(err)
			}
		}
		// Published in the local ring, maybe not submitted: the close
		// must make the local ring consume it (and the cancel) before
		// the descriptor goes.
		if err := home.CloseHandle(h); err != nil {
			t.Fatal(err)
		}
		local.sqMu.Lock()
		pending := local.r.pending()
		local.sqMu.Unlock()
		if pending != 0 {
			t.Fatalf("submitted %v: %d entries unconsumed in the local ring after the close", submitted, pending)
		}
		if w.n.Load() != 1 {
			t.Fatalf("submitted %v: the close woke the read %d times", submitted, w.n.Load())
		}
		if r, ok := pollOn(f, local, w); !ok || !errors.Is(r.Err, net.ErrClosed) {
			t.Fatalf("submitted %v: read pending at the close: %v, %v", submitted, ok, r.Err)
		}
		parkUntil(t, local, "the cancelled read's completion is reaped", func() bool { return local.InFlight() == 0 })
		if w.n.Load() != 1 {
			t.Fatalf("submitted %v: the cancelled read's completion woke it", submitted)
		}
	}
}

func TestADroppedOperationOnAnotherRingIsConsumedBeforeItLeavesItsHandle(t *testing.T) {
	home := newTestDriver(t, Options{})
	local := newTestDriver(t, Options{})
	h, peer := socketPair(t, home)
	buf := make([]byte, 4)
	f := home.Read(h, buf)
	pollOn(f, local, core.NoopWaker)
	core.Drop(f)
	local.sqMu.Lock()
	pending := local.r.pending()
	local.sqMu.Unlock()
	if pending != 0 {
		t.Fatalf("%d entries unconsumed in the local ring after the drop", pending)
	}
	parkUntil(t, local, "the cancelled read's completion is reaped", func() bool { return local.InFlight() == 0 })
	if local.cancelHit.Load() != 1 {
		t.Fatalf("cancels found %d, missed %d; want the one to find the read", local.cancelHit.Load(), local.cancelMiss.Load())
	}
	if _, err := unix.Write(peer, []byte("next")); err != nil {
		t.Fatal(err)
	}
	if r := await(t, home, home.Read(h, buf)); r.Err != nil || string(buf[:r.Value]) != "next" {
		t.Fatalf("read after the drop: %q, %v", buf[:r.Value], r.Err)
	}
}

func TestClosingAFileFailsItsOperationsOnAnotherRing(t *testing.T) {
	home := newTestDriver(t, Options{})
	local := newTestDriver(t, Options{})
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[1])
	h, _, err := home.register(p[0], kindFile, "file")
	if err != nil {
		t.Fatal(err)
	}
	w := &countWaker{}
	f := home.ReadAt(h, make([]byte, 4), -1)
	pollOn(f, local, w)
	if err := local.Park(0); err != nil {
		t.Fatal(err)
	}
	if r := await(t, home, home.CloseFile(h)); r.Err != nil {
		t.Fatal(r.Err)
	}
	if r, ok := pollOn(f, local, w); !ok || !errors.Is(r.Err, net.ErrClosed) {
		t.Fatalf("read pending at the close: %v, %v", ok, r.Err)
	}
	parkUntil(t, local, "the cancelled read's completion is reaped", func() bool { return local.InFlight() == 0 })
}

func TestClosingARingFailsTheOperationsOtherHandlesSubmittedToIt(t *testing.T) {
	home := newTestDriver(t, Options{})
	local, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, peer := socketPair(t, home)
	w := &countWaker{}
	f := home.Read(h, make([]byte, 4))
	pollOn(f, local, w)
	if err := local.Park(0); err != nil {
		t.Fatal(err)
	}
	if err := local.Close(); err != nil {
		t.Fatal(err)
	}
	if local.InFlight() != 0 {
		t.Fatalf("%d operations in flight after Close", local.InFlight())
	}
	if w.n.Load() != 1 {
		t.Fatalf("Close woke the foreign read %d times", w.n.Load())
	}
	if r, ok := pollOn(f, local, w); !ok || !errors.Is(r.Err, core.ErrDriverClosed) {
		t.Fatalf("read pending at Close: %v, %v", ok, r.Err)
	}
	// The handle is the home's and still works; a worker whose driver
	// is closed submits at home.
	if _, err := unix.Write(peer, []byte("home")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	g := home.Read(h, buf)
	var r core.Result[int]
	parkUntil(t, home, "the read at home resolves", func() bool {
		var ok bool
		r, ok = pollOn(g, local, core.NoopWaker)
		return ok
	})
	if r.Err != nil || string(buf[:r.Value]) != "home" {
		t.Fatalf("read after the local ring closed: %q, %v", buf[:r.Value], r.Err)
	}
}
