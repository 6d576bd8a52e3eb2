//go:build darwin || freebsd || netbsd || openbsd || linux

package readiness

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

func newIO(initial uint64) *IO { return NewIO(-1, nil, Stream, "tcp", initial) }

func TestAnEventThatArrivesBetweenEAGAINAndTheClearIsKept(t *testing.T) {
	s := newIO(0)
	s.SetReadiness(1, Readable)
	w := &Waiter{}
	ev, err, ok := s.PollReady(core.NewContext(nil), w, InterestRead)
	if !ok || err != nil || ev.Tick != 1 {
		t.Fatalf("PollReady = %+v, %v, %v; want ready at tick 1", ev, err, ok)
	}
	// The read returned EAGAIN; before the operation clears readiness, the
	// driver's next turn delivers a new edge.
	s.SetReadiness(2, Readable)
	s.ClearReadiness(ev, ^uint64(0))
	if _, _, ok := s.PollReady(core.NewContext(nil), w, InterestRead); !ok {
		t.Fatal("the clear erased an event newer than the one the operation saw: its next wait would never end")
	}
	if s.Waiters() != 0 {
		t.Fatal("a ready poll left a waiter linked")
	}
}

func TestClearingAtTheObservedTickRemovesTheReadiness(t *testing.T) {
	s := newIO(0)
	s.SetReadiness(7, Readable|Writable)
	ev, _, _ := s.PollReady(core.NewContext(nil), &Waiter{}, InterestRead)
	s.ClearReadiness(ev, ^uint64(0))
	if got := s.readiness.Load() & readinessMask; got != Writable {
		t.Fatalf("readiness after clearing the read side = %b, want only Writable", got)
	}
	w := &Waiter{}
	if _, _, ok := s.PollReady(core.NewContext(nil), w, InterestRead); ok {
		t.Fatal("still Readable after the clear")
	}
	if s.Waiters() != 1 {
		t.Fatal("a pending poll did not link its waiter")
	}
}

func TestAShortTransferKeepsAHangUpButEAGAINClearsIt(t *testing.T) {
	s := newIO(0)
	s.SetReadiness(3, ReadClosed|Readable)
	ev, _, _ := s.PollReady(core.NewContext(nil), &Waiter{}, InterestRead)
	// A short read drained the socket, but the peer's hang-up still
	// stands: the next read must see the end of the stream at once.
	s.ClearReadiness(ev, drained)
	if s.readiness.Load()&ReadClosed == 0 {
		t.Fatal("a short read cleared the peer's hang-up")
	}
	if _, _, ok := s.PollReady(core.NewContext(nil), &Waiter{}, InterestRead); !ok {
		t.Fatal("a hung-up stream must stay Readable so reads see the end of stream")
	}
	// EAGAIN proves the read side open: a stale hang-up must go, or every
	// later read would spin on EAGAIN.
	ev, _, _ = s.PollReady(core.NewContext(nil), &Waiter{}, InterestRead)
	s.ClearReadiness(ev, ^uint64(0))
	if _, _, ok := s.PollReady(core.NewContext(nil), &Waiter{}, InterestRead); ok {
		t.Fatal("still ready after EAGAIN cleared the hang-up")
	}
}

func TestEveryWaiterOfADirectionIsWokenAndOnlyThatDirection(t *testing.T) {
	s := newIO(0)
	readers := []*countWaker{{}, {}, {}}
	writer := &countWaker{}
	ws := make([]*Waiter, 4)
	for i, rw := range readers {
		ws[i] = &Waiter{}
		if _, _, ok := s.PollReady(core.NewContext(rw), ws[i], InterestRead); ok {
			t.Fatal("ready with no readiness")
		}
	}
	ws[3] = &Waiter{}
	s.PollReady(core.NewContext(writer), ws[3], InterestWrite)
	s.SetReadiness(1, Readable)
	for _, w := range s.Wake(Readable, nil) {
		w.Wake()
	}
	for i, rw := range readers {
		if rw.n.Load() != 1 {
			t.Fatalf("reader %d woken %d times, want 1", i, rw.n.Load())
		}
	}
	if writer.n.Load() != 0 || s.Waiters() != 1 {
		t.Fatalf("the writer was woken (%d) or unlinked (waiters %d) by a read event", writer.n.Load(), s.Waiters())
	}
}

func TestARemovedWaiterIsNeverWoken(t *testing.T) {
	s := newIO(0)
	kept, dropped := &countWaker{}, &countWaker{}
	wk, wd := &Waiter{}, &Waiter{}
	s.PollReady(core.NewContext(kept), wk, InterestRead)
	s.PollReady(core.NewContext(dropped), wd, InterestRead)
	s.Remove(wd)
	s.Remove(wd) // twice is harmless
	for _, w := range s.Wake(Readable, nil) {
		w.Wake()
	}
	if dropped.n.Load() != 0 || kept.n.Load() != 1 {
		t.Fatalf("dropped woken %d times, kept %d; want 0 and 1", dropped.n.Load(), kept.n.Load())
	}
}

func TestRepollingAPendingOperationReplacesItsWakerWithoutALinkedDuplicate(t *testing.T) {
	s := newIO(0)
	first, second := &countWaker{}, &countWaker{}
	w := &Waiter{}
	s.PollReady(core.NewContext(first), w, InterestRead)
	s.PollReady(core.NewContext(second), w, InterestRead)
	if s.Waiters() != 1 {
		t.Fatalf("%d waiters after two polls of one operation, want 1", s.Waiters())
	}
	for _, wk := range s.Wake(Readable, nil) {
		wk.Wake()
	}
	if first.n.Load() != 0 || second.n.Load() != 1 {
		t.Fatalf("woke the stale waker %d times and the current one %d", first.n.Load(), second.n.Load())
	}
}

func TestClosingWakesEveryWaiterWithTheClosedError(t *testing.T) {
	s := newIO(0)
	r, w := &countWaker{}, &countWaker{}
	wr, ww := &Waiter{}, &Waiter{}
	s.PollReady(core.NewContext(r), wr, InterestRead)
	s.PollReady(core.NewContext(w), ww, InterestWrite)
	s.MarkClosed()
	for _, wk := range s.WakeAll(nil) {
		wk.Wake()
	}
	if r.n.Load() != 1 || w.n.Load() != 1 {
		t.Fatal("a close did not wake every waiter")
	}
	if _, err, ok := s.PollReady(core.NewContext(nil), wr, InterestRead); !ok || err != ErrClosed {
		t.Fatalf("PollReady after close = %v, %v; want ErrClosed", err, ok)
	}
	s.MarkShutdown()
	if _, err, _ := s.PollReady(core.NewContext(nil), wr, InterestWrite); err != ErrDriverClosed {
		t.Fatalf("PollReady after the driver closed = %v; want ErrDriverClosed", err)
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
	r := FD{n: 7, close: closes.close}
	if !r.Acquire() || !r.Acquire() {
		t.Fatal("acquire failed on an open descriptor")
	}
	r.BeginClose()
	if closes.count(7) != 0 {
		t.Fatal("beginClose closed a descriptor two calls are using")
	}
	if r.Acquire() {
		t.Fatal("acquire succeeded on a closing descriptor")
	}
	r.Release()
	if closes.count(7) != 0 {
		t.Fatal("the first of two releases closed it")
	}
	r.Release()
	if closes.count(7) != 1 || !r.IsClosed() {
		t.Fatal("the last release did not close it")
	}
	r.BeginClose()
	if r.Acquire() || closes.count(7) != 1 {
		t.Fatal("a closed descriptor was usable or closed again")
	}
}

func TestAnIdleDescriptorIsClosedAtOnceAndOnlyOnce(t *testing.T) {
	closes := watchCloses(t)
	r := FD{n: 3, close: closes.close}
	r.BeginClose()
	r.BeginClose()
	if closes.count(3) != 1 {
		t.Fatalf("closed %d times, want once", closes.count(3))
	}
	if r.Acquire() {
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
		r := &FD{n: i, close: closes.close}
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if r.Acquire() {
					r.Release()
				}
			}()
		}
		r.BeginClose()
		wg.Wait()
	}
	for i := range runs {
		if closes.count(i) != 1 {
			t.Fatalf("descriptor %d closed %d times, want 1", i, closes.count(i))
		}
	}
}

func TestAFailedRegistrationFailsEveryOperationWithItsError(t *testing.T) {
	s := newIO(Readable)
	if _, _, ok := s.PollReady(core.NewContext(nil), &Waiter{}, InterestWrite); ok {
		t.Fatal("not Writable, but ready")
	}
	want := errors.New("kevent: refused")
	s.MarkFailed(want)
	for _, interest := range []uint64{InterestRead, InterestWrite} {
		if _, err, ok := s.PollReady(core.NewContext(nil), &Waiter{}, interest); !ok || err != want {
			t.Fatalf("after the failure: %v, %v; want the registration's error", err, ok)
		}
	}
}
