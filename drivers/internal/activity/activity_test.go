package activity

import (
	"sync"
	"sync/atomic"
	"testing"
)

func TestHookRunsOnEveryTransitionFromZero(t *testing.T) {
	var c Counter
	var calls int
	c.OnActive(func() {
		if c.Quiescent() {
			t.Error("the hook ran before the count was visible")
		}
		calls++
	})
	if !c.Quiescent() {
		t.Fatal("a new counter is not quiescent")
	}
	c.Add()
	c.Add()
	if calls != 1 {
		t.Fatalf("two adds from zero: %d hook calls, want 1", calls)
	}
	c.Done()
	if c.Quiescent() {
		t.Fatal("quiescent with one registration left")
	}
	c.Done()
	if !c.Quiescent() {
		t.Fatal("not quiescent after every Done")
	}
	c.Add()
	if calls != 2 {
		t.Fatalf("second transition from zero: %d hook calls, want 2", calls)
	}
	c.OnActive(nil)
	c.Done()
	c.Add()
	if calls != 2 || c.Len() != 1 {
		t.Fatalf("after removing the hook: %d calls, len %d", calls, c.Len())
	}
}

func TestDoneWithoutAddPanics(t *testing.T) {
	var c Counter
	defer func() {
		if recover() == nil {
			t.Fatal("Done on a zero counter did not panic")
		}
	}()
	c.Done()
}

// A sleeper that announces itself and then checks Quiescent, racing with a
// registration whose hook looks for the announcement, is never left asleep
// while something is registered: the handshake core.QuiescentDriver
// documents.
func TestNoActivationIsMissed(t *testing.T) {
	for range 2000 {
		var c Counter
		var asleep atomic.Bool
		woken := make(chan struct{}, 1)
		c.OnActive(func() {
			if asleep.CompareAndSwap(true, false) {
				woken <- struct{}{}
			}
		})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Add()
		}()
		asleep.Store(true)
		if c.Quiescent() {
			<-woken // hangs (and times the test out) if the activation is missed
		} else {
			asleep.Store(false)
		}
		wg.Wait()
		if c.Quiescent() {
			t.Fatal("quiescent after Add")
		}
	}
}
