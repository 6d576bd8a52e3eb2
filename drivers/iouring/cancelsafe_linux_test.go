//go:build linux

package iouring

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// Cancel safety, driven by hand: each test puts the operation in one
// state of its race with the kernel (in the CQ but not reaped, reaped but
// not taken, waiting in the kernel) before it is dropped or cancelled.

// submitInline polls f once and submits it without reaping, after the
// peer has made the data it needs available: the kernel completes it
// inline and its CQE waits in the CQ.
func submitInline[T any](t *testing.T, d *Driver, f core.Future[T]) {
	t.Helper()
	if _, ok := pollOnce(f, core.NoopWaker); ok {
		t.Fatal("the operation resolved before it was submitted")
	}
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	if !d.cqReady() {
		t.Fatal("no completion in the CQ after submitting an operation that could complete at once")
	}
}

func readString(t *testing.T, d *Driver, h core.Handle, n int) (string, error) {
	t.Helper()
	buf := make([]byte, n)
	r := await(t, d, d.Read(h, buf))
	return string(buf[:r.Value]), r.Err
}

func TestAReadDroppedAfterItsCompletionWasReapedKeepsItsBytes(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	if _, err := unix.Write(peer, []byte("reaped")); err != nil {
		t.Fatal(err)
	}
	w := &countWaker{}
	f := d.Read(h, make([]byte, 8))
	if _, ok := pollOnce(f, w); ok {
		t.Fatal("the read resolved before it was submitted")
	}
	parkUntil(t, d, "the read's completion is reaped", func() bool { return w.n.Load() == 1 })
	core.Drop(f)
	if got, err := readString(t, d, h, 8); err != nil || got != "reaped" {
		t.Fatalf("read after the dropped one: %q, %v; want its bytes", got, err)
	}
}

func TestKeptBytesAreReadInOrderThroughSmallerBuffersBeforeNewOnes(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	if _, err := unix.Write(peer, []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	f := d.Read(h, make([]byte, 16))
	submitInline(t, d, f)
	core.Drop(f)
	if _, err := unix.Write(peer, []byte("abc")); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for len(got) < 13 {
		s, err := readString(t, d, h, 4)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, s...)
	}
	if string(got) != "0123456789abc" {
		t.Fatalf("read %q; want the kept bytes, then the new ones", got)
	}
}

func TestAVectoredReadTakesKeptBytesIntoEachBufferInTurn(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	if _, err := unix.Write(peer, []byte("abcdefg")); err != nil {
		t.Fatal(err)
	}
	f := d.Readv(h, [][]byte{make([]byte, 3), nil, make([]byte, 8)})
	submitInline(t, d, f)
	core.Drop(f)
	a, b, c := make([]byte, 2), make([]byte, 0), make([]byte, 3)
	r := await(t, d, d.Readv(h, [][]byte{a, b, c}))
	if r.Err != nil || r.Value != 5 || string(a)+string(c) != "abcde" {
		t.Fatalf("readv: %d, %v, %q %q; want abcde across the buffers", r.Value, r.Err, a, c)
	}
	if got, err := readString(t, d, h, 8); err != nil || got != "fg" {
		t.Fatalf("the rest: %q, %v", got, err)
	}
}

func TestAFailureADroppedReadReceivedComesAfterTheKeptBytesBeforeIt(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	// The peer sends "last" and closes with bytes of ours unread: a Unix
	// stream socket then reads "last", then ECONNRESET, then EOF.
	if _, err := unix.Write(peer, []byte("last")); err != nil {
		t.Fatal(err)
	}
	rec, _ := d.lookup(h)
	if _, err := unix.Write(rec.fd, []byte("unread")); err != nil {
		t.Fatal(err)
	}
	if err := unix.Close(peer); err != nil {
		t.Fatal(err)
	}
	// Two reads submitted together complete inline in ring order, with
	// "last" and ECONNRESET; both are dropped.
	first, second := d.Read(h, make([]byte, 8)), d.Read(h, make([]byte, 8))
	pollOnce(first, core.NoopWaker)
	submitInline(t, d, second)
	core.Drop(first)
	core.Drop(second)
	if got, err := readString(t, d, h, 8); err != nil || got != "last" {
		t.Fatalf("first read: %q, %v; want the kept bytes", got, err)
	}
	if _, err := readString(t, d, h, 8); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("second read: %v; want the ECONNRESET the dropped read received", err)
	}
	if _, err := readString(t, d, h, 8); !errors.Is(err, io.EOF) {
		t.Fatalf("third read: %v; want EOF", err)
	}
}

func TestAReadWaitingInTheKernelTakesBytesADroppedReadKept(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	// Two reads wait in the kernel; then data arrives, and whichever the
	// kernel gave it to, the first read is dropped.
	first := d.Read(h, make([]byte, 8))
	second := d.Read(h, make([]byte, 8))
	wf, ws := &countWaker{}, &countWaker{}
	pollOnce(first, wf)
	pollOnce(second, ws)
	if err := d.flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Write(peer, []byte("once")); err != nil {
		t.Fatal(err)
	}
	core.Drop(first)
	// The second read resolves with the bytes without any more data: it
	// is not left waiting while they are kept.
	r := await(t, d, second)
	if r.Err != nil || r.Value != 4 {
		t.Fatalf("the second read: %d, %v; want the 4 bytes", r.Value, r.Err)
	}
	if wf.n.Load() != 0 {
		t.Fatal("the dropped read's waker was woken")
	}
}

func TestClosingAHandleDiscardsItsKeptBytes(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	if _, err := unix.Write(peer, []byte("gone")); err != nil {
		t.Fatal(err)
	}
	f := d.Read(h, make([]byte, 8))
	submitInline(t, d, f)
	core.Drop(f)
	rec, _ := d.lookup(h)
	if len(rec.kept) != 1 {
		t.Fatalf("kept %d results, want the one", len(rec.kept))
	}
	if err := d.CloseHandle(h); err != nil {
		t.Fatal(err)
	}
	if rec.kept != nil {
		t.Fatal("the closed handle still holds its kept bytes")
	}
}

// fillSendBuffer writes to the driver's end of a socket pair until its
// send buffer is full.
func fillSendBuffer(t *testing.T, d *Driver, h core.Handle) {
	t.Helper()
	rec, _ := d.lookup(h)
	if err := unix.SetNonblock(rec.fd, true); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 4096)
	for {
		if _, err := unix.Write(rec.fd, chunk); err != nil {
			if errors.Is(err, unix.EAGAIN) {
				return
			}
			t.Fatal(err)
		}
	}
}

func TestACancelledWriteTheKernelHoldsResolvesWithECANCELED(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, _ := socketPair(t, d)
	fillSendBuffer(t, d, h)
	f := d.Write(h, []byte("waits"))
	if _, ok := pollOnce(f, core.NoopWaker); ok {
		t.Fatal("a write to a full socket resolved")
	}
	if err := d.Park(0); err != nil {
		t.Fatal(err)
	}
	if !f.(*intFuture).Cancel() {
		t.Fatal("Cancel of a write in flight reported false")
	}
	r := await(t, d, f)
	if r.Value != 0 || !errors.Is(r.Err, syscall.ECANCELED) {
		t.Fatalf("the cancelled write: %d, %v; want 0 and ECANCELED", r.Value, r.Err)
	}
}

func TestACancelledWriteThatHadCompletedReportsItsBytes(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	f := d.Write(h, []byte("sent"))
	submitInline(t, d, f)
	if !f.(*intFuture).Cancel() {
		t.Fatal("Cancel of a submitted write reported false")
	}
	r := await(t, d, f)
	if r.Err != nil || r.Value != 4 {
		t.Fatalf("the write cancelled after it completed: %d, %v; want its 4 bytes", r.Value, r.Err)
	}
	got := make([]byte, 8)
	n, err := unix.Read(peer, got)
	if err != nil || !bytes.Equal(got[:n], []byte("sent")) {
		t.Fatalf("the peer read %q, %v", got[:n], err)
	}
}

func TestCancelOfAReadOrOfAWriteNeverSubmittedReportsFalse(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, _ := socketPair(t, d)
	if d.Write(h, []byte("x")).(*intFuture).Cancel() {
		t.Fatal("Cancel of a write never polled reported true")
	}
	f := d.Read(h, make([]byte, 1))
	pollOnce(f, core.NoopWaker)
	if f.(*intFuture).Cancel() {
		t.Fatal("Cancel of a read reported true: reads are dropped")
	}
	core.Drop(f)
}

// A Drop that settles a read while another goroutine parks on the same
// driver, blocked in the kernel or about to block again after reaping
// the read: the Drop returns, and no byte is lost. (Parking again at
// once after a Park is what a busy worker does; a settle waiting only for
// parkMu would wait behind that Park for good.)
func TestADropSettlesAReadWhileAnotherGoroutineKeepsParking(t *testing.T) {
	for _, o := range []Options{{}, {SQPoll: true, SQPollIdle: 10 * time.Millisecond}} {
		t.Run(fmt.Sprintf("sqpoll=%v", o.SQPoll), func(t *testing.T) {
			d := newTestDriver(t, o)
			h, peer := socketPair(t, d)
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
						return
					}
				}
			}()
			defer func() {
				close(stop)
				d.Unpark()
				<-parked
			}()
			var sent, got []byte
			buf := make([]byte, 4)
			for i := range 300 {
				if i%3 == 0 {
					b := []byte{byte(i), byte(i >> 8)}
					if _, err := unix.Write(peer, b); err != nil {
						t.Fatal(err)
					}
					sent = append(sent, b...)
				}
				f := d.Read(h, buf)
				r, ok := pollOnce(f, core.NoopWaker)
				if !ok {
					runtime.Gosched()
					r, ok = pollOnce(f, core.NoopWaker)
				}
				if ok {
					got = append(got, buf[:r.Value]...)
					continue
				}
				done := make(chan struct{})
				go func() { core.Drop(f); close(done) }()
				select {
				case <-done:
				case <-time.After(10 * time.Second): // a watchdog, not a verdict
					t.Fatalf("drop %d did not return", i)
				}
			}
			// What the dropped reads received comes next.
			for len(got) < len(sent) {
				f := d.Read(h, buf)
				var r core.Result[int]
				done := make(chan struct{})
				go func() {
					defer close(done)
					for {
						var ok bool
						if r, ok = pollOnce(f, core.NoopWaker); ok {
							return
						}
						runtime.Gosched()
					}
				}()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("read %d of %d bytes: did not resolve", len(got), len(sent))
				}
				if r.Err != nil {
					t.Fatal(r.Err)
				}
				got = append(got, buf[:r.Value]...)
			}
			if !bytes.Equal(got, sent) {
				t.Fatalf("read %v, sent %v", got, sent)
			}
		})
	}
}
