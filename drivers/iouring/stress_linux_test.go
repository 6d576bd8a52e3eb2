//go:build linux

package iouring

import (
	"bytes"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// chanWaker signals a channel, without blocking, when woken.
type chanWaker chan struct{}

func (c chanWaker) Wake() {
	select {
	case c <- struct{}{}:
	default:
	}
}

// waitState spins (yielding) until the driver's park state is want; the
// watchdog turns a hang into a failure.
func waitState(t *testing.T, d *Driver, want uint32) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for d.state.Load() != want {
		if time.Now().After(deadline) {
			t.Fatalf("the driver never reached park state %d", want)
		}
		runtime.Gosched()
	}
}

func TestAnOperationSubmittedWhileAParkIsBlockedReachesTheKernel(t *testing.T) {
	d := newTestDriver(t, Options{})
	h, peer := socketPair(t, d)
	if _, err := unix.Write(peer, []byte("data")); err != nil {
		t.Fatal(err)
	}
	parked := make(chan error, 1)
	go func() { parked <- d.Park(-1) }()
	// The Park counted its (zero) entries and is blocked, or about to
	// block, in io_uring_enter: only the submitter can get the read to
	// the kernel now.
	waitState(t, d, parkWaiting)
	woken := make(chanWaker, 1)
	buf := make([]byte, 8)
	f := d.Read(h, buf)
	// The submitter's enter completes the read inline; the parker reaps
	// it, maybe before this first poll even returns.
	r, ok := pollOnce(f, woken)
	if !ok {
		select {
		case <-woken:
		case <-time.After(10 * time.Second): // watchdog
			t.Fatal("the read submitted during a blocked Park never completed")
		}
		r, ok = pollOnce(f, woken)
	}
	if err := <-parked; err != nil {
		t.Fatal(err)
	}
	if !ok || r.Err != nil || string(buf[:r.Value]) != "data" {
		t.Fatalf("read: %v %d %v", ok, r.Value, r.Err)
	}
}

// Several goroutines submit reads, writes and drops on their own socket
// pairs while one goroutine parks and others Unpark: a bounded stress of
// the submission path, the hand-off to a blocked Park and the reaper,
// for the race detector. Every exchange must arrive intact.
func TestConcurrentSubmittersAndAParker(t *testing.T) {
	d := newTestDriver(t, Options{Entries: 8})
	const workers, rounds = 4, 150
	stop := make(chan struct{})
	var parkerDone sync.WaitGroup
	parkerDone.Add(1)
	go func() {
		defer parkerDone.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := d.Park(5 * time.Millisecond); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := range workers {
		h, peer := socketPair(t, d)
		wg.Add(1)
		go func() {
			defer wg.Done()
			await := func(f core.Future[core.Result[int]]) core.Result[int] {
				woken := make(chanWaker, 1)
				for {
					if r, ok := pollOnce(f, woken); ok {
						return r
					}
					select {
					case <-woken:
					case <-time.After(10 * time.Second): // watchdog
						t.Error("an operation never completed")
						return core.Result[int]{}
					}
					d.Unpark()
				}
			}
			for i := range rounds {
				// Each round is one full exchange, so a read gets the
				// whole echo (a Unix stream delivers a 3-byte write
				// whole).
				msg := []byte{byte(w), byte(i), byte(i >> 8)}
				if i%5 == 0 {
					// A read dropped while pending: it takes nothing.
					dropped := d.Read(h, make([]byte, 3))
					pollOnce(dropped, core.NoopWaker)
					core.Drop(dropped)
				}
				if r := await(d.Write(h, msg)); r.Err != nil || r.Value != 3 {
					t.Errorf("write: %d %v", r.Value, r.Err)
					return
				}
				echo := make([]byte, 3)
				if _, err := unix.Read(peer, echo); err != nil {
					t.Error(err)
					return
				}
				if _, err := unix.Write(peer, echo); err != nil {
					t.Error(err)
					return
				}
				got := make([]byte, 3)
				r := await(d.Read(h, got))
				if r.Err != nil {
					t.Errorf("read: %v", r.Err)
					return
				}
				// The dropped read's cancel went into the ring before
				// the write that provoked the echo, and a read waiting
				// for data is cancelled when the cancel is processed:
				// it cannot have taken the echo.
				if r.Value != 3 || !bytes.Equal(got, msg) {
					t.Errorf("round %d: read %d bytes %v, want %v", i, r.Value, got, msg)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	parkerDone.Wait()
	parkUntil(t, d, "every cancelled read's completion is reaped", func() bool { return d.InFlight() == 0 })
}
