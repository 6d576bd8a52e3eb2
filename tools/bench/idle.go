package bench

import (
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync"
	"github.com/weftrt/weft/runtime/rt"
)

// The idle workload (W11 idle_tasks): n tasks parked on one lib/wsync
// Notify, then all released with NotifyWaiters; against n goroutines
// parked receiving from one channel, released by closing it. Two figures:
//
//	bytes per parked task: the growth of the memory the Go runtime holds
//	    for the heap and goroutine stacks (MemStats HeapInuse + StackInuse,
//	    after a collection) between before the spawns and when all n are
//	    parked, divided by n. For weft that is the task's cell with its
//	    future (the Notified waiter inside it) and the runtime's
//	    bookkeeping; for Go, the goroutine's descriptor and stack.
//	release time: from the NotifyWaiters call (the channel close) until
//	    the last task (goroutine) has run, in ns per task.
//
// The measurement of memory is outside the timed release. Parked tasks are
// counted by the first poll of each (after the Notified future is
// registered): the root task awaits that count before measuring.

// idleTask parks on the Notify at its first poll and ends when released.
type idleTask struct {
	f      wsync.NotifiedFuture
	parked *counter // counts tasks that have registered
	done   *counter // counts tasks released
	polled bool
}

func (t *idleTask) Poll(cx *core.Context) (core.Unit, bool) {
	if _, ok := t.f.Poll(cx); ok {
		t.done.add(cx)
		return core.Unit{}, true
	}
	if !t.polled {
		t.polled = true
		t.parked.add(cx)
	}
	return core.Unit{}, false
}

// idleRoot spawns the n tasks, awaits all parked, and reports back to the
// measuring goroutine through the channel before it awaits the release.
type idleRoot struct {
	n       int
	notify  *wsync.Notify
	parked  *counter
	done    *counter
	spawned bool
	report  bool
	atPark  chan struct{}
}

func (r *idleRoot) Poll(cx *core.Context) (core.Unit, bool) {
	if !r.spawned {
		r.spawned = true
		for range r.n {
			t := &idleTask{parked: r.parked, done: r.done}
			r.notify.NotifiedInto(&t.f)
			core.Spawn(cx, core.Future[core.Unit](t))
		}
	}
	if !r.report {
		if _, ok := r.parked.Poll(cx); !ok {
			return core.Unit{}, false
		}
		r.report = true
		close(r.atPark)
	}
	return r.done.Poll(cx)
}

// idleFigures is one run of W11: bytes per parked task and release time
// in ns per task.
type idleFigures struct {
	bytesPerTask float64
	releaseNs    float64
}

// heldBytes is the memory the Go runtime holds for heap objects and
// goroutine stacks, after a collection.
func heldBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse + ms.StackInuse
}

func weftIdle(r *rt.Runtime, n int) (idleFigures, error) {
	var notify wsync.Notify
	root := &idleRoot{n: n, notify: &notify, parked: newCounter(n), done: newCounter(n), atPark: make(chan struct{})}
	before := heldBytes()
	res := make(chan error, 1)
	go func() {
		_, err := rt.BlockOn(r, core.Future[core.Unit](root))
		res <- err
	}()
	select {
	case <-root.atPark:
	case err := <-res:
		return idleFigures{}, fmt.Errorf("the root task ended before all tasks parked: %v", err)
	}
	after := heldBytes()
	start := time.Now()
	notify.NotifyWaiters()
	err := <-res
	el := time.Since(start)
	return idleFigures{
		bytesPerTask: float64(int64(after)-int64(before)) / float64(n),
		releaseNs:    perOp(el, n),
	}, err
}

func goIdle(n int) (idleFigures, error) {
	release := make(chan struct{})
	var parked, done sync.WaitGroup
	parked.Add(n)
	done.Add(n)
	before := heldBytes()
	for range n {
		go func() {
			parked.Done()
			<-release
			done.Done()
		}()
	}
	parked.Wait()
	// Each goroutine is at (or about to reach) its receive; a blocked or
	// runnable goroutine holds the same memory.
	after := heldBytes()
	start := time.Now()
	close(release)
	done.Wait()
	el := time.Since(start)
	return idleFigures{
		bytesPerTask: float64(int64(after)-int64(before)) / float64(n),
		releaseNs:    perOp(el, n),
	}, nil
}

// weftIdleBytes is W11's memory figure on r: bytes per parked task.
func weftIdleBytes(r *rt.Runtime, n int) (float64, error) {
	f, err := weftIdle(r, n)
	return f.bytesPerTask, err
}

// goIdleBytes is W11's memory figure in plain Go: bytes per goroutine
// parked on a channel receive.
func goIdleBytes(n int) (float64, error) {
	f, err := goIdle(n)
	return f.bytesPerTask, err
}

// weftIdleRelease is W11's release figure on r: ns per task from
// NotifyWaiters until the last task has run.
func weftIdleRelease(r *rt.Runtime, n int) (float64, error) {
	f, err := weftIdle(r, n)
	return f.releaseNs, err
}

// goIdleRelease is W11's release figure in plain Go: ns per goroutine from
// closing the channel until the last one has run.
func goIdleRelease(n int) (float64, error) {
	f, err := goIdle(n)
	return f.releaseNs, err
}
