package deferred_test

import (
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/deferred"
)

// counter is a waker that counts its wakes and may defer another waker
// when woken, as a task that yields again would.
type counter struct {
	wakes int
	then  func()
}

func (c *counter) Wake() {
	c.wakes++
	if c.then != nil {
		c.then()
	}
}

func TestWakeAllWakesEveryDeferredWakerOnceAndEmptiesTheList(t *testing.T) {
	var d deferred.Wakers
	cx := core.NewContext(nil)
	ws := []*counter{{}, {}, {}}
	for _, w := range ws {
		d.Add(w)
	}
	if d.Len() != 3 {
		t.Fatalf("Len %d, want 3", d.Len())
	}
	d.WakeAll(cx)
	for i, w := range ws {
		if w.wakes != 1 {
			t.Fatalf("waker %d woken %d times, want once", i, w.wakes)
		}
	}
	if d.Len() != 0 {
		t.Fatalf("Len %d after WakeAll, want 0", d.Len())
	}
	d.WakeAll(cx)
	if ws[0].wakes != 1 {
		t.Fatal("a second WakeAll woke a waker again")
	}
}

func TestAWakerDeferredDuringWakeAllWaitsForTheNextCall(t *testing.T) {
	var d deferred.Wakers
	cx := core.NewContext(nil)
	again := &counter{}
	d.Add(&counter{then: func() { d.Add(again) }})
	d.WakeAll(cx)
	if again.wakes != 0 || d.Len() != 1 {
		t.Fatalf("the waker deferred meanwhile was woken %d times, Len %d; want 0 and 1", again.wakes, d.Len())
	}
	d.WakeAll(cx)
	if again.wakes != 1 {
		t.Fatal("the next WakeAll did not wake it")
	}
}

// collector is a waker whose wake the worker collects, as a worker's
// schedule path does for a task woken by WakeAll.
type collector struct {
	d *deferred.Wakers
	t *core.Task
}

func (c collector) Wake() {
	if !c.d.Waking() {
		panic("woken outside WakeAll")
	}
	c.d.Collect(c.t)
}

func TestTasksCollectedDuringWakeAllAreReturnedInOrder(t *testing.T) {
	var d deferred.Wakers
	var ts []*core.Task
	for range 3 {
		x, _ := core.NewTask(core.Future[int](core.PollFunc[int](func(*core.Context) (int, bool) { return 0, true })))
		ts = append(ts, x)
		d.Add(collector{&d, x})
	}
	if d.Waking() {
		t.Fatal("Waking before WakeAll")
	}
	woken := d.WakeAll(core.NewContext(nil))
	if d.Waking() {
		t.Fatal("Waking after WakeAll")
	}
	for i, want := range ts {
		if got := woken.Pop(); got != want {
			t.Fatalf("collected task %d is not the %d-th woken", i, i)
		}
	}
	if woken.Len() != 0 {
		t.Fatal("more tasks collected than woken")
	}
}

func TestTakeAndDropEmptyTheList(t *testing.T) {
	var d deferred.Wakers
	w := &counter{}
	d.Add(w)
	if got := d.Take(); len(got) != 1 || got[0] != core.Waker(w) || d.Len() != 0 {
		t.Fatal("Take did not return the deferred waker and empty the list")
	}
	d.Add(w)
	d.Drop()
	d.WakeAll(core.NewContext(nil))
	if d.Len() != 0 || w.wakes != 0 {
		t.Fatal("a dropped waker was kept or woken")
	}
}
