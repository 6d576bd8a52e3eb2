package workstealing_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// chain returns a task named name+"1" that spawns name+"2", and so on up
// to name+n; the last counts c down.
func chain(tr *trace, c *countdown, name string, i, n int) core.Future[core.Unit] {
	label := name + string(rune('0'+i))
	return step(tr, label, func(cx *core.Context) {
		if i == n {
			c.done()
			return
		}
		spawn(cx, chain(tr, c, name, i+1, n))
	})
}

// lifoOrder runs, on one worker, a root A that spawns M and then the
// chain B1..B5 (each spawning the next), and returns the order in which
// the tasks ran. extra runs in A after the spawns.
func lifoOrder(t *testing.T, extra func(cx *core.Context), tweak ...func(*workstealing.Config)) []string {
	r, _ := newRuntime(t, 1, tweak...)
	tr := &trace{}
	c := &countdown{}
	c.reset(2)
	blockOn(t, r, rootThen(func(cx *core.Context) {
		tr.add("A")
		spawn(cx, step(tr, "M", func(*core.Context) { c.done() }))
		spawn(cx, chain(tr, c, "B", 1, 5))
		if extra != nil {
			extra(cx)
		}
	}, c))
	return tr.get()
}

func TestLIFOSlotRunsTheLastSpawnedTaskNext(t *testing.T) {
	got := lifoOrder(t, nil)
	assert.Equal(t, []string{"A", "B1"}, got[:2], "B1, spawned last, runs right after A, ahead of M")
}

func TestLIFOSlotRunsAtMostThreeTasksInARowThenTheNextGoesToTheBack(t *testing.T) {
	got := lifoOrder(t, nil)
	// B1, B2, B3 run from the LIFO slot; B4, spawned by the third LIFO
	// poll, queues behind M; after M, B4 starts a new tick and B5 is a
	// LIFO task again.
	assert.Equal(t, []string{"A", "B1", "B2", "B3", "M", "B4", "B5"}, got)
}

func TestMaxLIFOPollsBoundsTheRun(t *testing.T) {
	got := lifoOrder(t, nil, func(c *workstealing.Config) { c.MaxLIFOPolls = 1 })
	assert.Equal(t, []string{"A", "B1", "M", "B2", "B3", "B4", "B5"}, got)
}

func TestLIFOSlotNeverRunsPastTheBudget(t *testing.T) {
	spendBudget := func(cx *core.Context) {
		for i := 0; i < core.Budget; i++ {
			if !cx.Proceed() {
				t.Fatal("budget ran out early")
			}
		}
	}
	got := lifoOrder(t, spendBudget)
	// A spent its whole budget, which B1 would have shared: B1 goes to
	// the back, behind M.
	assert.Equal(t, []string{"A", "M", "B1"}, got[:3])
}

func TestDisabledLIFOSlotRunsSpawnedTasksInOrder(t *testing.T) {
	got := lifoOrder(t, nil, func(c *workstealing.Config) { c.LIFOSlot = false })
	assert.Equal(t, []string{"A", "M", "B1", "B2", "B3", "B4", "B5"}, got)
}
