//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
)

// countWaker counts its wakes.
type countWaker struct{ n atomic.Int64 }

func (w *countWaker) Wake() { w.n.Add(1) }

func newIO(initial uint64) *scheduledIO {
	s := &scheduledIO{}
	s.readiness.Store(initial)
	return s
}

func TestAnEventThatArrivesBetweenEAGAINAndTheClearIsKept(t *testing.T) {
	s := newIO(0)
	s.setReadiness(1, readable)
	w := &waiter{}
	ev, err, ok := s.pollReady(core.NewContext(nil), w, interestRead)
	if !ok || err != nil || ev.tick != 1 {
		t.Fatalf("pollReady = %+v, %v, %v; want ready at tick 1", ev, err, ok)
	}
	// The read returned EAGAIN; before the operation clears readiness, the
	// driver's next turn delivers a new edge.
	s.setReadiness(2, readable)
	s.clearReadiness(ev, ^uint64(0))
	if _, _, ok := s.pollReady(core.NewContext(nil), w, interestRead); !ok {
		t.Fatal("the clear erased an event newer than the one the operation saw: its next wait would never end")
	}
	if s.waiters() != 0 {
		t.Fatal("a ready poll left a waiter linked")
	}
}

func TestClearingAtTheObservedTickRemovesTheReadiness(t *testing.T) {
	s := newIO(0)
	s.setReadiness(7, readable|writable)
	ev, _, _ := s.pollReady(core.NewContext(nil), &waiter{}, interestRead)
	s.clearReadiness(ev, ^uint64(0))
	if got := s.readiness.Load() & readinessMask; got != writable {
		t.Fatalf("readiness after clearing the read side = %b, want only writable", got)
	}
	w := &waiter{}
	if _, _, ok := s.pollReady(core.NewContext(nil), w, interestRead); ok {
		t.Fatal("still readable after the clear")
	}
	if s.waiters() != 1 {
		t.Fatal("a pending poll did not link its waiter")
	}
}

func TestAShortTransferKeepsAHangUpButEAGAINClearsIt(t *testing.T) {
	s := newIO(0)
	s.setReadiness(3, readClosed|readable)
	ev, _, _ := s.pollReady(core.NewContext(nil), &waiter{}, interestRead)
	// A short read drained the socket, but the peer's hang-up still
	// stands: the next read must see the end of the stream at once.
	s.clearReadiness(ev, drained)
	if s.readiness.Load()&readClosed == 0 {
		t.Fatal("a short read cleared the peer's hang-up")
	}
	if _, _, ok := s.pollReady(core.NewContext(nil), &waiter{}, interestRead); !ok {
		t.Fatal("a hung-up stream must stay readable so reads see the end of stream")
	}
	// EAGAIN proves the read side open: a stale hang-up must go, or every
	// later read would spin on EAGAIN.
	ev, _, _ = s.pollReady(core.NewContext(nil), &waiter{}, interestRead)
	s.clearReadiness(ev, ^uint64(0))
	if _, _, ok := s.pollReady(core.NewContext(nil), &waiter{}, interestRead); ok {
		t.Fatal("still ready after EAGAIN cleared the hang-up")
	}
}

func TestEveryWaiterOfADirectionIsWokenAndOnlyThatDirection(t *testing.T) {
	s := newIO(0)
	readers := []*countWaker{{}, {}, {}}
	writer := &countWaker{}
	ws := make([]*waiter, 4)
	for i, rw := range readers {
		ws[i] = &waiter{}
		if _, _, ok := s.pollReady(core.NewContext(rw), ws[i], interestRead); ok {
			t.Fatal("ready with no readiness")
		}
	}
	ws[3] = &waiter{}
	s.pollReady(core.NewContext(writer), ws[3], interestWrite)
	s.setReadiness(1, readable)
	for _, w := range s.wake(readable, nil) {
		w.Wake()
	}
	for i, rw := range readers {
		if rw.n.Load() != 1 {
			t.Fatalf("reader %d woken %d times, want 1", i, rw.n.Load())
		}
	}
	if writer.n.Load() != 0 || s.waiters() != 1 {
		t.Fatalf("the writer was woken (%d) or unlinked (waiters %d) by a read event", writer.n.Load(), s.waiters())
	}
}

func TestARemovedWaiterIsNeverWoken(t *testing.T) {
	s := newIO(0)
	kept, dropped := &countWaker{}, &countWaker{}
	wk, wd := &waiter{}, &waiter{}
	s.pollReady(core.NewContext(kept), wk, interestRead)
	s.pollReady(core.NewContext(dropped), wd, interestRead)
	s.remove(wd)
	s.remove(wd) // twice is harmless
	for _, w := range s.wake(readable, nil) {
		w.Wake()
	}
	if dropped.n.Load() != 0 || kept.n.Load() != 1 {
		t.Fatalf("dropped woken %d times, kept %d; want 0 and 1", dropped.n.Load(), kept.n.Load())
	}
}

func TestRepollingAPendingOperationReplacesItsWakerWithoutALinkedDuplicate(t *testing.T) {
	s := newIO(0)
	first, second := &countWaker{}, &countWaker{}
	w := &waiter{}
	s.pollReady(core.NewContext(first), w, interestRead)
	s.pollReady(core.NewContext(second), w, interestRead)
	if s.waiters() != 1 {
		t.Fatalf("%d waiters after two polls of one operation, want 1", s.waiters())
	}
	for _, wk := range s.wake(readable, nil) {
		wk.Wake()
	}
	if first.n.Load() != 0 || second.n.Load() != 1 {
		t.Fatalf("woke the stale waker %d times and the current one %d", first.n.Load(), second.n.Load())
	}
}

func TestClosingWakesEveryWaiterWithTheClosedError(t *testing.T) {
	s := newIO(0)
	r, w := &countWaker{}, &countWaker{}
	wr, ww := &waiter{}, &waiter{}
	s.pollReady(core.NewContext(r), wr, interestRead)
	s.pollReady(core.NewContext(w), ww, interestWrite)
	s.markClosed(closedBit)
	for _, wk := range s.wakeAll(nil) {
		wk.Wake()
	}
	if r.n.Load() != 1 || w.n.Load() != 1 {
		t.Fatal("a close did not wake every waiter")
	}
	if _, err, ok := s.pollReady(core.NewContext(nil), wr, interestRead); !ok || err != errClosed {
		t.Fatalf("pollReady after close = %v, %v; want errClosed", err, ok)
	}
	s.markClosed(shutdownBit)
	if _, err, _ := s.pollReady(core.NewContext(nil), wr, interestWrite); err != errDriverClosed {
		t.Fatalf("pollReady after the driver closed = %v; want errDriverClosed", err)
	}
}

// closeWatch counts closes per descriptor.
type closeWatch struct {
	mu sync.Mutex
	n  map[int]int
}

func (w *closeWatch) close(fd int) { w.mu.Lock(); w.n[fd]++; w.mu.Unlock() }

func (w *closeWatch) count(fd int) int { w.mu.Lock(); defer w.mu.Unlock(); return w.n[fd] }

func watchCloses(*testing.T) *closeWatch { return &closeWatch{n: map[int]int{}} }

func TestADescriptorInUseIsClosedByTheLastRelease(t *testing.T) {
	closes := watchCloses(t)
	r := fdRef{n: 7, close: closes.close}
	if !r.acquire() || !r.acquire() {
		t.Fatal("acquire failed on an open descriptor")
	}
	r.beginClose()
	if closes.count(7) != 0 {
		t.Fatal("beginClose closed a descriptor two calls are using")
	}
	if r.acquire() {
		t.Fatal("acquire succeeded on a closing descriptor")
	}
	r.release()
	if closes.count(7) != 0 {
		t.Fatal("the first of two releases closed it")
	}
	r.release()
	if closes.count(7) != 1 || !r.isClosed() {
		t.Fatal("the last release did not close it")
	}
	r.beginClose()
	if r.acquire() || closes.count(7) != 1 {
		t.Fatal("a closed descriptor was usable or closed again")
	}
}

func TestAnIdleDescriptorIsClosedAtOnceAndOnlyOnce(t *testing.T) {
	closes := watchCloses(t)
	r := fdRef{n: 3, close: closes.close}
	r.beginClose()
	r.beginClose()
	if closes.count(3) != 1 {
		t.Fatalf("closed %d times, want once", closes.count(3))
	}
	if r.acquire() {
		t.Fatal("acquire after close succeeded")
	}
}

// Acquires racing with a close: every run must close the descriptor exactly
// once, whoever ends up doing it. (An acquire that bounces off a closing
// descriptor may be the one to close it.)
func TestCloseRacingWithAcquiresClosesExactlyOnce(t *testing.T) {
	closes := watchCloses(t)
	const runs = 2000
	for i := range runs {
		r := &fdRef{n: i, close: closes.close}
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r.acquire() {
					r.release()
				}
			}()
		}
		r.beginClose()
		wg.Wait()
	}
	for i := range runs {
		if closes.count(i) != 1 {
			t.Fatalf("descriptor %d closed %d times, want 1", i, closes.count(i))
		}
	}
}

func ioFD(fd int) *scheduledIO {
	s := &scheduledIO{}
	s.fd.n = fd
	return s
}

func TestAStaleHandleDoesNotResolveAfterItsSlotIsReused(t *testing.T) {
	sl := newSlab()
	a := ioFD(5)
	ha, _ := sl.insert(a)
	if sl.get(ha) != a || sl.byFD(5) != a {
		t.Fatal("lookup of a fresh handle failed")
	}
	if _, err := sl.insert(ioFD(5)); err == nil {
		t.Fatal("a descriptor was registered twice")
	}
	if sl.remove(ha) != a || sl.remove(ha) != nil {
		t.Fatal("remove did not return the registration exactly once")
	}
	// The kernel reuses the descriptor number.
	b := ioFD(5)
	hb, _ := sl.insert(b)
	if uint32(hb) != uint32(ha) {
		t.Fatalf("the descriptor's slot was not reused (handles %#x, %#x)", ha, hb)
	}
	if sl.get(ha) != nil {
		t.Fatal("a stale handle resolved to the slot's new registration")
	}
	if sl.get(hb) != b || sl.get(0) != nil || sl.get(core.Handle(1<<40|99999)) != nil {
		t.Fatal("lookup of the new, zero or out-of-range handles is wrong")
	}
}

func TestTheSlabGrowsAcrossPagesAndRefusesInsertsOnceClosed(t *testing.T) {
	sl := newSlab()
	hs := make([]core.Handle, 3*pageSize)
	for i := range hs {
		hs[i], _ = sl.insert(ioFD(i))
	}
	for i, h := range hs {
		if sl.get(h) == nil || sl.byFD(i) == nil {
			t.Fatalf("handle %d lost after growth", i)
		}
	}
	if got := len(sl.closeAll()); got != len(hs) || sl.len() != 0 {
		t.Fatalf("closeAll returned %d of %d", got, len(hs))
	}
	if _, err := sl.insert(ioFD(1)); err == nil {
		t.Fatal("insert into a closed slab succeeded")
	}
}

func TestAFailedRegistrationFailsEveryOperationWithItsError(t *testing.T) {
	s := newIO(readable)
	if _, _, ok := s.pollReady(core.NewContext(nil), &waiter{}, interestWrite); ok {
		t.Fatal("not writable, but ready")
	}
	want := errors.New("kevent: refused")
	s.markFailed(want)
	for _, interest := range []uint64{interestRead, interestWrite} {
		if _, err, ok := s.pollReady(core.NewContext(nil), &waiter{}, interest); !ok || err != want {
			t.Fatalf("after the failure: %v, %v; want the registration's error", err, ok)
		}
	}
}

func TestEOFAndErrorsMapToReadinessBits(t *testing.T) {
	for _, c := range []struct {
		filter, flags int
		fflags        uint32
		want          uint64
	}{
		{evfiltRead, 0, 0, readable},
		{evfiltWrite, 0, 0, writable},
		{evfiltRead, evEOF, 0, readable | readClosed},
		{evfiltWrite, evEOF, 0, writable | writeClosed},
		{evfiltRead, evEOF, 54, readable | readClosed | errored | writable},
		{evfiltWrite, evEOF, 61, writable | writeClosed | errored | readable},
	} {
		if got := readinessOf(c.filter, c.flags, c.fflags); got != c.want {
			t.Errorf("filter %d flags %#x fflags %d: %b, want %b", c.filter, c.flags, c.fflags, got, c.want)
		}
	}
}
