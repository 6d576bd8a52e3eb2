//go:build linux

package kqemu

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Each test states one kevent behaviour the emulation claims. Sockets are
// Unix stream pairs; "zero" is a timeout that polls.

var zero = unix.Timespec{}

func newKq(t *testing.T) *Kqueue {
	t.Helper()
	kq, err := New()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kq.Close() })
	return kq
}

// pair returns a connected, non-blocking Unix stream pair, closed at
// cleanup through kq (CloseFD) unless the test closed it.
func pair(t *testing.T, kq *Kqueue) (a, b int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		kq.CloseFD(fds[0])
		kq.CloseFD(fds[1])
	})
	return fds[0], fds[1]
}

func ch(ident int, filter int16, flags uint16, fflags uint32) Kevent {
	return Kevent{Ident: uint64(ident), Filter: filter, Flags: flags, Fflags: fflags}
}

// apply makes changes and fails the test on an error.
func apply(t *testing.T, kq *Kqueue, changes ...Kevent) {
	t.Helper()
	if _, err := kq.Kevent(changes, nil, &zero); err != nil {
		t.Fatalf("changes %+v: %v", changes, err)
	}
}

// poll collects what is pending without waiting.
func poll(t *testing.T, kq *Kqueue) []Kevent {
	t.Helper()
	evs := make([]Kevent, 16)
	n, err := kq.Kevent(nil, evs, &zero)
	if err != nil {
		t.Fatal(err)
	}
	return evs[:n]
}

func has(evs []Kevent, ident int, filter int16) (Kevent, bool) {
	for _, ev := range evs {
		if ev.Ident == uint64(ident) && ev.Filter == filter {
			return ev, true
		}
	}
	return Kevent{}, false
}

func write(t *testing.T, fd int, s string) {
	t.Helper()
	if _, err := unix.Write(fd, []byte(s)); err != nil {
		t.Fatal(err)
	}
}

func drain(fd int) {
	buf := make([]byte, 4096)
	for {
		if n, err := unix.Read(fd, buf); n <= 0 || err != nil {
			return
		}
	}
}

func TestAddingAReadyDescriptorReportsItAtOnceAndAnIdleOneNot(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0), ch(a, EVFILT_WRITE, EV_ADD|EV_CLEAR, 0))
	evs := poll(t, kq)
	if _, ok := has(evs, a, EVFILT_READ); ok {
		t.Fatalf("an empty socket reported readable: %+v", evs)
	}
	if _, ok := has(evs, a, EVFILT_WRITE); !ok {
		t.Fatalf("a socket with buffer space did not report writable: %+v", evs)
	}
	// A descriptor that is readable before its knote is added is
	// reported by the first collection.
	c, d := pair(t, kq)
	write(t, d, "x")
	apply(t, kq, ch(c, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	if _, ok := has(poll(t, kq), c, EVFILT_READ); !ok {
		t.Fatal("a descriptor readable when added was not reported")
	}
	_ = b
}

func TestEVCLEARReportsAnEdgeOnceAndAgainOnlyAfterNewActivity(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	write(t, b, "one")
	if _, ok := has(poll(t, kq), a, EVFILT_READ); !ok {
		t.Fatal("data arrived but no read event")
	}
	// Still readable (nothing was read), but the state was reset.
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("EV_CLEAR knote reported again without new activity: %+v", evs)
	}
	write(t, b, "two")
	if _, ok := has(poll(t, kq), a, EVFILT_READ); !ok {
		t.Fatal("new data did not report the EV_CLEAR knote again")
	}
}

func TestALevelTriggeredKnoteIsReportedWhileItsConditionHolds(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD, 0))
	write(t, b, "x")
	for i := range 3 {
		if _, ok := has(poll(t, kq), a, EVFILT_READ); !ok {
			t.Fatalf("collection %d: a readable level-triggered knote was not reported", i)
		}
	}
	drain(a)
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("drained socket still reported: %+v", evs)
	}
}

func TestTheDataOfAReadEventIsTheNumberOfBytesAvailable(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	write(t, b, "12345")
	ev, ok := has(poll(t, kq), a, EVFILT_READ)
	if !ok || ev.Data != 5 {
		t.Fatalf("read event %+v, want data 5", ev)
	}
}

func TestEVONESHOTDeletesTheKnoteWhenItIsRetrieved(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_ONESHOT, 0))
	write(t, b, "x")
	ev, ok := has(poll(t, kq), a, EVFILT_READ)
	if !ok || ev.Flags&EV_ONESHOT == 0 {
		t.Fatalf("oneshot event %+v, %v", ev, ok)
	}
	if kq.Knotes() != 0 {
		t.Fatal("the oneshot knote is still there")
	}
	write(t, b, "y")
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("a deleted oneshot knote reported %+v", evs)
	}
	if _, err := kq.Kevent([]Kevent{ch(a, EVFILT_READ, EV_DELETE, 0)}, nil, &zero); err != unix.ENOENT {
		t.Fatalf("deleting the retrieved oneshot knote: %v, want ENOENT", err)
	}
}

func TestEVDISABLEKeepsActivityUntilEVENABLE(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR|EV_DISABLE, 0))
	write(t, b, "x")
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("a disabled knote reported %+v", evs)
	}
	apply(t, kq, ch(a, EVFILT_READ, EV_ENABLE, 0))
	if _, ok := has(poll(t, kq), a, EVFILT_READ); !ok {
		t.Fatal("activity recorded while disabled was not reported on EV_ENABLE")
	}
	// Disabling a queued knote hides it too.
	write(t, b, "y")
	apply(t, kq, ch(a, EVFILT_READ, EV_DISABLE, 0))
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("a knote disabled after activity reported %+v", evs)
	}
}

func TestEVDELETEStopsEventsAndAMissingKnoteIsENOENT(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	apply(t, kq, ch(a, EVFILT_READ, EV_DELETE, 0))
	write(t, b, "x")
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("a deleted knote reported %+v", evs)
	}
	for _, flags := range []uint16{EV_DELETE, EV_ENABLE, EV_DISABLE} {
		if _, err := kq.Kevent([]Kevent{ch(a, EVFILT_READ, flags, 0)}, nil, &zero); err != unix.ENOENT {
			t.Fatalf("flags %#x on a missing knote: %v, want ENOENT", flags, err)
		}
	}
}

func TestEVDISPATCHDisablesTheKnoteWhenItIsRetrieved(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR|EV_DISPATCH, 0))
	write(t, b, "x")
	if _, ok := has(poll(t, kq), a, EVFILT_READ); !ok {
		t.Fatal("no first event")
	}
	write(t, b, "y")
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("a dispatched knote reported before EV_ENABLE: %+v", evs)
	}
	apply(t, kq, ch(a, EVFILT_READ, EV_ENABLE, 0))
	if _, ok := has(poll(t, kq), a, EVFILT_READ); !ok {
		t.Fatal("re-enabling did not report the activity since")
	}
}

func TestErrorsOfChangesAreEVERRORentriesWhenThereIsRoomAndTheCallsErrorOtherwise(t *testing.T) {
	kq := newKq(t)
	a, _ := pair(t, kq)
	changes := []Kevent{
		ch(999999, EVFILT_READ, EV_ADD, 0),       // not a descriptor: EBADF
		ch(a, 42, EV_ADD, 0),                     // unknown filter: EINVAL
		ch(a, EVFILT_WRITE, EV_DELETE, 0),        // no such knote: ENOENT
		ch(a, EVFILT_READ, EV_ADD|EV_RECEIPT, 0), // fine, with a receipt
	}
	evs := make([]Kevent, 8)
	n, err := kq.Kevent(changes, evs, &zero)
	if err != nil || n != 4 {
		t.Fatalf("Kevent = %d, %v; want 4 entries", n, err)
	}
	want := []unix.Errno{unix.EBADF, unix.EINVAL, unix.ENOENT, 0}
	for i, ev := range evs[:n] {
		if ev.Flags&EV_ERROR == 0 || unix.Errno(ev.Data) != want[i] || ev.Ident != changes[i].Ident {
			t.Errorf("entry %d = %+v, want EV_ERROR with data %v", i, ev, want[i])
		}
	}
	// Without room, the first failing change is the call's error.
	if _, err := kq.Kevent([]Kevent{ch(999999, EVFILT_READ, EV_ADD, 0)}, nil, &zero); err != unix.EBADF {
		t.Fatalf("a failing change without an event list: %v, want EBADF", err)
	}
}

func TestAReceiptReturnsWithoutCollectingPendingEvents(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	write(t, b, "x")
	evs := make([]Kevent, 8)
	n, err := kq.Kevent([]Kevent{ch(b, EVFILT_WRITE, EV_ADD|EV_RECEIPT, 0)}, evs, &zero)
	if err != nil || n != 1 || evs[0].Flags&EV_ERROR == 0 || evs[0].Data != 0 {
		t.Fatalf("Kevent = %d, %v, %+v; want one receipt", n, err, evs[:n])
	}
	if _, ok := has(poll(t, kq), a, EVFILT_READ); !ok {
		t.Fatal("the event pending during the receipt call was lost")
	}
}

func TestEVEOFIsReportedWhenThePeerShutsDownOrCloses(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0), ch(a, EVFILT_WRITE, EV_ADD|EV_CLEAR, 0))
	poll(t, kq) // the initial writable
	if err := unix.Shutdown(b, unix.SHUT_WR); err != nil {
		t.Fatal(err)
	}
	ev, ok := has(poll(t, kq), a, EVFILT_READ)
	if !ok || ev.Flags&EV_EOF == 0 {
		t.Fatalf("after the peer's shutdown: %+v, %v; want a read event with EV_EOF", ev, ok)
	}
	if err := kq.CloseFD(b); err != nil {
		t.Fatal(err)
	}
	evs := poll(t, kq)
	if ev, ok := has(evs, a, EVFILT_WRITE); !ok || ev.Flags&EV_EOF == 0 {
		t.Fatalf("after the peer closed: %+v; want a write event with EV_EOF", evs)
	}
}

func TestUserEventsTriggerAndTheirFflagsFollowTheControlBits(t *testing.T) {
	kq := newKq(t)
	const id = 7
	apply(t, kq, Kevent{Ident: id, Filter: EVFILT_USER, Flags: EV_ADD | EV_CLEAR, Udata: 0xfeed})
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("an untriggered user event reported %+v", evs)
	}
	steps := []struct {
		fflags uint32
		want   uint32
	}{
		{NOTE_FFCOPY | 0b1100, 0b1100},
		{NOTE_FFOR | 0b0011, 0b1111},
		{NOTE_FFAND | 0b0110, 0b0110},
		{NOTE_FFNOP | 0b1001, 0b0110},
	}
	for _, s := range steps {
		apply(t, kq, ch(id, EVFILT_USER, 0, s.fflags|NOTE_TRIGGER))
		ev, ok := has(poll(t, kq), id, EVFILT_USER)
		if !ok || ev.Fflags != s.want || ev.Udata != 0xfeed {
			t.Fatalf("after fflags %#x: %+v, %v; want fflags %#b and udata 0xfeed", s.fflags, ev, ok, s.want)
		}
		if evs := poll(t, kq); len(evs) != 0 {
			t.Fatalf("an EV_CLEAR user event was reported twice for one trigger: %+v", evs)
		}
	}
	// Without NOTE_TRIGGER a change only updates fflags.
	apply(t, kq, ch(id, EVFILT_USER, 0, NOTE_FFCOPY|1))
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("a change without NOTE_TRIGGER fired: %+v", evs)
	}
	if _, err := kq.Kevent([]Kevent{ch(99, EVFILT_USER, 0, NOTE_TRIGGER)}, nil, &zero); err != unix.ENOENT {
		t.Fatalf("triggering a missing user event: %v, want ENOENT", err)
	}
}

func TestAUserEventWithoutEVCLEARStaysTriggered(t *testing.T) {
	kq := newKq(t)
	apply(t, kq, ch(1, EVFILT_USER, EV_ADD, 0), ch(1, EVFILT_USER, 0, NOTE_TRIGGER))
	for i := range 2 {
		if _, ok := has(poll(t, kq), 1, EVFILT_USER); !ok {
			t.Fatalf("collection %d: a triggered level user event was not reported", i)
		}
	}
}

func TestATriggerFromAnotherGoroutineEndsABlockingWait(t *testing.T) {
	kq := newKq(t)
	apply(t, kq, ch(0, EVFILT_USER, EV_ADD|EV_CLEAR, 0))
	done := make(chan []Kevent)
	go func() {
		evs := make([]Kevent, 4)
		n, _ := kq.Kevent(nil, evs, nil) // waits for ever
		done <- evs[:n]
	}()
	time.Sleep(10 * time.Millisecond) // let it block (the verdict does not depend on it)
	apply(t, kq, ch(0, EVFILT_USER, 0, NOTE_TRIGGER))
	select {
	case evs := <-done:
		if _, ok := has(evs, 0, EVFILT_USER); !ok {
			t.Fatalf("the wait returned %+v", evs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a trigger did not end a blocking kevent")
	}
}

func TestAddingAReadyDescriptorFromAnotherGoroutineEndsABlockingWait(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	write(t, b, "x")
	done := make(chan []Kevent)
	go func() {
		evs := make([]Kevent, 4)
		n, _ := kq.Kevent(nil, evs, nil)
		done <- evs[:n]
	}()
	time.Sleep(10 * time.Millisecond)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	select {
	case evs := <-done:
		if _, ok := has(evs, a, EVFILT_READ); !ok {
			t.Fatalf("the wait returned %+v", evs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("adding a ready descriptor did not end a blocking kevent")
	}
}

func TestAnEdgeEndsABlockingWaitAndATimeoutEndsAnIdleOne(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	ts := unix.NsecToTimespec(int64(5 * time.Millisecond))
	if n, err := kq.Kevent(nil, make([]Kevent, 4), &ts); n != 0 || err != nil {
		t.Fatalf("an idle wait with a timeout returned %d, %v", n, err)
	}
	done := make(chan []Kevent)
	go func() {
		evs := make([]Kevent, 4)
		n, _ := kq.Kevent(nil, evs, nil)
		done <- evs[:n]
	}()
	time.Sleep(10 * time.Millisecond)
	write(t, b, "x")
	select {
	case evs := <-done:
		if _, ok := has(evs, a, EVFILT_READ); !ok {
			t.Fatalf("the wait returned %+v", evs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("new data did not end a blocking kevent")
	}
}

func TestReAddingModifiesUdataButNotTheCreationFlags(t *testing.T) {
	kq := newKq(t)
	a, b := pair(t, kq)
	apply(t, kq, Kevent{Ident: uint64(a), Filter: EVFILT_READ, Flags: EV_ADD | EV_CLEAR, Udata: 1})
	apply(t, kq, Kevent{Ident: uint64(a), Filter: EVFILT_READ, Flags: EV_ADD, Udata: 2})
	write(t, b, "x")
	ev, ok := has(poll(t, kq), a, EVFILT_READ)
	if !ok || ev.Udata != 2 || ev.Flags&EV_CLEAR == 0 {
		t.Fatalf("event %+v, want udata 2 and EV_CLEAR kept", ev)
	}
	if kq.Knotes() != 1 {
		t.Fatalf("%d knotes after re-adding one", kq.Knotes())
	}
}

func TestCloseFDDeletesTheDescriptorsKnotes(t *testing.T) {
	kq := newKq(t)
	a, _ := pair(t, kq)
	apply(t, kq, ch(a, EVFILT_READ, EV_ADD|EV_CLEAR, 0), ch(a, EVFILT_WRITE, EV_ADD|EV_CLEAR, 0))
	if err := kq.CloseFD(a); err != nil {
		t.Fatal(err)
	}
	if kq.Knotes() != 0 {
		t.Fatalf("%d knotes left after closing their descriptor", kq.Knotes())
	}
	// The number may be reused by a new descriptor that starts clean.
	c, d := pair(t, kq)
	apply(t, kq, ch(c, EVFILT_READ, EV_ADD|EV_CLEAR, 0))
	if evs := poll(t, kq); len(evs) != 0 {
		t.Fatalf("a new idle descriptor reported %+v", evs)
	}
	write(t, d, "x")
	if _, ok := has(poll(t, kq), c, EVFILT_READ); !ok {
		t.Fatal("the new descriptor's event was not reported")
	}
}

func TestARegularFileIsAlwaysReady(t *testing.T) {
	kq := newKq(t)
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd := int(f.Fd())
	apply(t, kq, ch(fd, EVFILT_READ, EV_ADD, 0), ch(fd, EVFILT_WRITE, EV_ADD, 0))
	evs := poll(t, kq)
	_, r := has(evs, fd, EVFILT_READ)
	_, w := has(evs, fd, EVFILT_WRITE)
	if !r || !w {
		t.Fatalf("a regular file reported %+v, want readable and writable", evs)
	}
	apply(t, kq, ch(fd, EVFILT_READ, EV_DELETE, 0), ch(fd, EVFILT_WRITE, EV_DELETE, 0))
}

func TestCloseEndsAWaitWithEBADFAndLaterCallsFail(t *testing.T) {
	kq, err := New()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		// A signal (Go's preemption, SIGURG) ends a wait with EINTR, as
		// it ends kevent's; callers wait again, as the driver does.
		for {
			_, err := kq.Kevent(nil, make([]Kevent, 1), nil)
			if err != unix.EINTR {
				done <- err
				return
			}
		}
	}()
	time.Sleep(10 * time.Millisecond)
	if err := kq.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		// Either the wait was running (EBADF from the wake-up) or it
		// started after Close (EBADF at once).
		if err != unix.EBADF {
			t.Fatalf("the wait returned %v, want EBADF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not end a blocking kevent")
	}
	if _, err := kq.Kevent(nil, nil, &zero); err != unix.EBADF {
		t.Fatalf("Kevent after Close: %v, want EBADF", err)
	}
}

func TestEventsAreCappedAtTheEventListAndTheRestStayQueued(t *testing.T) {
	kq := newKq(t)
	for i := range 5 {
		apply(t, kq, ch(100+i, EVFILT_USER, EV_ADD|EV_CLEAR, NOTE_TRIGGER))
	}
	evs := make([]Kevent, 3)
	n, _ := kq.Kevent(nil, evs, &zero)
	if n != 3 {
		t.Fatalf("collected %d into a list of 3", n)
	}
	if rest := poll(t, kq); len(rest) != 2 {
		t.Fatalf("the next collection got %d, want the other 2", len(rest))
	}
	// In activation order.
	if evs[0].Ident != 100 || evs[2].Ident != 102 {
		t.Fatalf("order %+v", evs)
	}
}
