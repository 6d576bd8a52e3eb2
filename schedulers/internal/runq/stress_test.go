package runq_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/globalq"
	"github.com/weftrt/weft/schedulers/internal/runq"
	"github.com/weftrt/weft/schedulers/internal/schedtest"
)

// TestQueueDeliversEveryTaskExactlyOnceUnderConcurrentStealing is the run
// queue's linearizability check, for either split. One owner pushes
// tasks (overflowing into a real global queue) and pops some; three
// thieves steal from it and from each other, each popping its own queue.
// Every task must come out exactly once: none twice, none lost.
func TestQueueDeliversEveryTaskExactlyOnceUnderConcurrentStealing(t *testing.T) {
	for _, s := range []runq.Split{runq.HalfUp, runq.HalfDown} {
		t.Run(map[runq.Split]string{runq.HalfUp: "HalfUp", runq.HalfDown: "HalfDown"}[s], func(t *testing.T) {
			deliverEveryTaskOnce(t, s)
		})
	}
}

func deliverEveryTaskOnce(t *testing.T, split runq.Split) {
	n := 300_000
	if raceEnabled || testing.Short() {
		n = 40_000
	}
	const thieves = 3
	tasks := schedtest.Tasks(n)
	index := make(map[*core.Task]int, n)
	for i, x := range tasks {
		index[x] = i
	}
	seen := make([]atomic.Int32, n)
	var delivered atomic.Int64
	deliver := func(x *core.Task) {
		i, ok := index[x]
		if !ok {
			t.Errorf("a task that was never pushed came out: %p", x)
			return
		}
		seen[i].Add(1)
		delivered.Add(1)
	}

	var src runq.Queue
	var global globalq.Queue
	dsts := make([]runq.Queue, thieves)
	var ownerDone atomic.Bool
	var stolen atomic.Int64
	var wg sync.WaitGroup

	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, x := range tasks {
			src.Push(x, &global)
			if i%3 == 0 {
				if y := src.Pop(); y != nil {
					deliver(y)
				}
			}
		}
		for y := src.Pop(); y != nil; y = src.Pop() {
			deliver(y)
		}
		ownerDone.Store(true)
	}()
	for k := 0; k < thieves; k++ {
		wg.Add(1)
		go func(k int) {
			defer wg.Done()
			own := &dsts[k]
			next := &dsts[(k+1)%thieves]
			for {
				if x, k := src.StealInto(own, split); x != nil {
					stolen.Add(int64(k))
					deliver(x)
				}
				if x, k := next.StealInto(own, split); x != nil {
					stolen.Add(int64(k))
					deliver(x)
				}
				// Pop a few, not all, so the queue stays a target.
				for j := 0; j < 4; j++ {
					if x := own.Pop(); x != nil {
						deliver(x)
					}
				}
				if ownerDone.Load() && src.IsEmpty() && own.IsEmpty() {
					return
				}
			}
		}(k)
	}
	wg.Wait()
	overflowed := global.Len()
	for x := global.Pop(); x != nil; x = global.Pop() {
		deliver(x)
	}
	for k := range dsts {
		if !dsts[k].IsEmpty() {
			t.Fatalf("thief %d left tasks behind", k)
		}
	}
	if !src.IsEmpty() {
		t.Fatal("the owner left tasks behind")
	}
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("task %d came out %d times", i, c)
		}
	}
	if delivered.Load() != int64(n) {
		t.Fatalf("%d tasks came out, want %d", delivered.Load(), n)
	}
	t.Logf("%d tasks: %d stolen, %d through the global queue", n, stolen.Load(), overflowed)
}
