package spi_test

import (
	"reflect"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// TestCoresPublicAPIHasNoSchedulerOnlyOperation: what only a scheduler
// or a timer may do is reachable through package spi alone, so a future
// (which sees only core) cannot, for one, reset its own budget.
func TestCoresPublicAPIHasNoSchedulerOnlyOperation(t *testing.T) {
	forbidden := map[reflect.Type][]string{
		reflect.TypeFor[*core.Task]():       {"Run", "Bind", "Shutdown", "Reject"},
		reflect.TypeFor[*core.Context]():    {"ResetBudget"},
		reflect.TypeFor[*core.Time]():       {"Parking", "Unparked", "SetUnpark", "ParkTimeout", "Fire", "CanAutoAdvance", "AutoAdvance"},
		reflect.TypeFor[*core.TimerEntry](): {"Expire", "ResetFired", "Fire"},
	}
	for typ, names := range forbidden {
		for _, name := range names {
			if _, ok := typ.MethodByName(name); ok {
				t.Errorf("%v has the scheduler-only method %s; it belongs in package spi", typ, name)
			}
		}
	}
	entry := reflect.TypeFor[core.TimerEntry]()
	for _, name := range []string{"Prev", "Next", "Index", "Slot", "Owner"} {
		if f, ok := entry.FieldByName(name); ok && f.IsExported() {
			t.Errorf("core.TimerEntry exports the timer's link field %s; timers reach it with spi.LinksOf", name)
		}
	}
}

// fakeWorker is a worker with no scheduler, driver or timers.
type fakeWorker struct{}

func (fakeWorker) Scheduler() core.Scheduler      { return nil }
func (fakeWorker) Defer(core.Waker)               {}
func (fakeWorker) Driver() core.Driver            { return nil }
func (fakeWorker) Time() *core.Time               { return nil }
func (fakeWorker) Blocking() core.BlockingSpawner { return nil }

// TestAWorkerContextStartsFullAndOnlyItsHandleRefillsIt: a future that
// spends the budget of the context it is polled with finds it spent until
// the worker, which holds the WorkerContext, resets it.
func TestAWorkerContextStartsFullAndOnlyItsHandleRefillsIt(t *testing.T) {
	w := spi.NewWorkerContext(fakeWorker{})
	cx := w.Context()
	if got := cx.BudgetRemaining(); got != core.Budget {
		t.Fatalf("a new worker context has %d budget units, want %d", got, core.Budget)
	}
	for cx.Proceed() {
	}
	if cx.BudgetRemaining() != 0 {
		t.Fatalf("spent budget reads %d", cx.BudgetRemaining())
	}
	w.ResetBudget()
	if got := cx.BudgetRemaining(); got != core.Budget {
		t.Fatalf("after ResetBudget the budget is %d, want %d", got, core.Budget)
	}
}

// TestLinksOfReachesTheEntrysOwnLinks: two entries' links are their own,
// and what a timer writes through LinksOf stays with the entry.
func TestLinksOfReachesTheEntrysOwnLinks(t *testing.T) {
	var a, b core.TimerEntry
	spi.LinksOf(&a).Next = &b
	spi.LinksOf(&b).Prev = &a
	spi.LinksOf(&a).Index = 7
	if spi.LinksOf(&a).Next != &b || spi.LinksOf(&b).Prev != &a || spi.LinksOf(&a).Index != 7 || spi.LinksOf(&b).Index != 0 {
		t.Fatal("the links written through LinksOf did not stay with their entries")
	}
}
