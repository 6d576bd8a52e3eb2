package workstealing

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// TestQueueDeliversEveryTaskExactlyOnceUnderConcurrentStealing is the
// local queue's linearizability check. One owner pushes tasks (overflowing
// into a real global queue) and pops some; three thieves steal from it and
// from each other, each popping its own queue. Every task must come out
// exactly once: none twice, none lost.
func TestQueueDeliversEveryTaskExactlyOnceUnderConcurrentStealing(t *testing.T) {
	n := 300_000
	if raceEnabled || testing.Short() {
		n = 40_000
	}
	const thieves = 3
	tasks := newTasks(n)
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

	var src localQueue
	var inj injectQueue
	dsts := make([]localQueue, thieves)
	var ownerDone atomic.Bool
	var stolen atomic.Int64
	var wg sync.WaitGroup

	wg.Add(1)
	go func() {
		defer wg.Done()
		for i, x := range tasks {
			src.push(x, &inj)
			if i%3 == 0 {
				if y := src.pop(); y != nil {
					deliver(y)
				}
			}
		}
		for y := src.pop(); y != nil; y = src.pop() {
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
				if x, k := src.stealInto(own); x != nil {
					stolen.Add(int64(k))
					deliver(x)
				}
				if x, k := next.stealInto(own); x != nil {
					stolen.Add(int64(k))
					deliver(x)
				}
				// Pop a few, not all, so the queue stays a target.
				for j := 0; j < 4; j++ {
					if x := own.pop(); x != nil {
						deliver(x)
					}
				}
				if ownerDone.Load() && src.isEmpty() && own.isEmpty() {
					return
				}
			}
		}(k)
	}
	wg.Wait()
	overflowed := inj.len()
	for x := inj.pop(); x != nil; x = inj.pop() {
		deliver(x)
	}
	for k := range dsts {
		require.True(t, dsts[k].isEmpty(), "thief %d left tasks behind", k)
	}
	require.True(t, src.isEmpty())
	for i := range seen {
		if c := seen[i].Load(); c != 1 {
			t.Fatalf("task %d came out %d times", i, c)
		}
	}
	require.EqualValues(t, n, delivered.Load())
	t.Logf("%d tasks: %d stolen, %d through the global queue", n, stolen.Load(), overflowed)
}
