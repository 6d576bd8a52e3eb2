package co_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/lib/wsync/oneshot"
)

// always is a future that is ready with v at every poll, any number of
// times, and counts its polls and drops: a kept branch that can win again
// and again without being reset.
type always struct {
	v            int
	polls, drops int
}

func (a *always) Poll(*core.Context) (int, bool) { a.polls++; return a.v, true }
func (a *always) Drop()                          { a.drops++ }

// counted is a future that is pending until its count of polls reaches
// readyAt (never, if readyAt is 0), and counts its drops.
type counted struct {
	polls, readyAt, drops int
}

func (f *counted) Poll(cx *core.Context) (string, bool) {
	f.polls++
	if f.readyAt > 0 && f.polls >= f.readyAt {
		return "ready", true
	}
	cx.Waker().Wake() // poll again soon
	return "", false
}
func (f *counted) Drop() { f.drops++ }

// panicky is a future whose poll panics.
type panicky struct{ drops int }

func (p *panicky) Poll(*core.Context) (int, bool) { panic("branch poll failed") }
func (p *panicky) Drop()                          { p.drops++ }

func TestSelectReturnsTheReadyBranchAndDropsEachLosingCaseOnce(t *testing.T) {
	a, c2 := &gate{}, &gate{}
	var got int
	idx, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		return co.Select(c, co.Case(a, nil), co.Case(future.Ready(7), &got), co.Case(c2, nil))
	})
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	assert.Equal(t, 7, got, "the winner's value is stored through its destination")
	assert.Equal(t, 1, a.Drops())
	assert.Equal(t, 1, c2.Drops())
}

func TestSelectSuspendsUntilABranchIsWokenAndStoresItsValue(t *testing.T) {
	var msg core.Result[string]
	g := &gate{}
	idx, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		tx, rx := oneshot.New[string]()
		co.Go(c, func(c *co.Ctx) int {
			c.Yield()
			c.Yield()
			_ = tx.Send("hello")
			return 0
		})
		return co.Select(c, co.Case(g, nil), co.Case(rx.Recv(), &msg))
	})
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	assert.Equal(t, "hello", msg.Value)
	require.NoError(t, msg.Err)
	assert.Equal(t, 1, g.Drops(), "the losing gate was dropped once")
}

func TestSelectOfOneBranchAwaitsIt(t *testing.T) {
	f := &counted{readyAt: 3}
	var v string
	idx, err := run(t, newRuntime(t), func(c *co.Ctx) int { return co.Select(c, co.Case(f, &v)) })
	require.NoError(t, err)
	assert.Equal(t, 0, idx)
	assert.Equal(t, "ready", v)
	assert.Equal(t, 3, f.polls)
	assert.Equal(t, 0, f.drops, "a winner is not dropped")
}

func TestSelectOnAClosedChannelWinsWithErrClosed(t *testing.T) {
	var res core.Result[int]
	g := &gate{}
	idx, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		tx, rx := mpsc.New[int](1)
		tx.Close()
		return co.Select(c, co.Keep(g, nil), co.Case(rx.Recv(), &res))
	})
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	assert.ErrorIs(t, res.Err, mpsc.ErrClosed)
	assert.Equal(t, 0, g.Drops(), "a kept branch is not dropped")
}

func TestAKeptFutureStaysArmedAcrossIterationsAndFiresOnce(t *testing.T) {
	const n = 200
	kept := &counted{readyAt: 0} // never ready until we say so
	var fired, received int
	var cases []*counted
	err := runE(t, newRuntime(t), func(c *co.Ctx) error {
		tx, rx := mpsc.New[int](n)
		for i := range n {
			if err := tx.TrySend(i); err != nil {
				return err
			}
		}
		var msg core.Result[int]
		for fired == 0 {
			if received == n {
				kept.readyAt = kept.polls + 1 // fires at its next poll
			}
			lose := &counted{} // a one-shot branch made for this iteration
			cases = append(cases, lose)
			switch co.Select(c, co.Case(rx.Recv(), &msg), co.Keep(kept, nil), co.Case(lose, nil)) {
			case 0:
				if msg.Err != nil || msg.Value != received {
					return errors.New("messages out of order")
				}
				received++
			case 1:
				fired++
			case 2:
				return errors.New("a never-ready branch won")
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, n, received)
	assert.Equal(t, 1, fired, "the kept future fired once")
	assert.Equal(t, 0, kept.drops, "Select never drops a kept future")
	assert.Positive(t, kept.polls)
	for i, l := range cases {
		require.Equal(t, 1, l.drops, "one-shot branch %d dropped once", i)
	}
}

func TestSelectBiasedPicksTheFirstReadyBranchInArgumentOrder(t *testing.T) {
	a, b := &always{v: 1}, &always{v: 2}
	wins, err := run(t, newRuntime(t), func(c *co.Ctx) [2]int {
		var w [2]int
		for range 1000 {
			w[co.SelectBiased(c, co.Keep(a, nil), co.Keep(b, nil))]++
		}
		return w
	})
	require.NoError(t, err)
	assert.Equal(t, [2]int{1000, 0}, wins)
	assert.Equal(t, 0, b.polls, "a biased select stops at the first ready branch")
}

func TestSelectStartsAtARandomBranchSoEveryReadyBranchWins(t *testing.T) {
	fs := []*always{{v: 0}, {v: 1}, {v: 2}}
	wins, err := run(t, newRuntime(t), func(c *co.Ctx) [3]int {
		var w [3]int
		var v int
		for range 3000 {
			i := co.Select(c, co.Keep(fs[0], &v), co.Keep(fs[1], &v), co.Keep(fs[2], &v))
			if v != i {
				panic("the value is not the winner's")
			}
			w[i]++
		}
		return w
	})
	require.NoError(t, err)
	for i, n := range wins {
		// Each branch wins a third of the time on average; 500 of 3000 is
		// far below any plausible draw of a fair source.
		assert.Greater(t, n, 500, "branch %d won %d of 3000 rounds", i, n)
	}
}

func TestAbortWhileInSelectDropsEachCaseOnceAndLeavesKeptFuturesToTheBody(t *testing.T) {
	one, two, kept, keptDeferred := &gate{}, &gate{}, &gate{}, &gate{}
	var unwound atomic.Bool
	err := runE(t, newRuntime(t), func(c *co.Ctx) error {
		h := co.Go(c, func(c *co.Ctx) int {
			defer unwound.Store(true)
			defer core.Drop(keptDeferred) // the body's own cleanup of a kept future
			return co.Select(c, co.Case(one, nil), co.Keep(kept, nil), co.Case(two, nil), co.Keep(keptDeferred, nil))
		})
		for !two.waiting() {
			c.Yield()
		}
		h.Abort()
		if _, err := co.AwaitResult(c, h); !core.IsCancelled(err) {
			return errors.New("the aborted task did not end cancelled")
		}
		return nil
	})
	require.NoError(t, err)
	assert.True(t, unwound.Load())
	assert.Equal(t, 1, one.Drops())
	assert.Equal(t, 1, two.Drops())
	assert.Equal(t, 0, kept.Drops(), "Select leaves a kept future to its owner")
	assert.Equal(t, 1, keptDeferred.Drops(), "the body's deferred drop ran once")
}

func TestASelectInADeferWhileUnwindingDropsItsCasesAndDoesNotWait(t *testing.T) {
	g1, g2 := &gate{}, &gate{}
	var after atomic.Bool
	err := runE(t, newRuntime(t), func(c *co.Ctx) error {
		h := co.Go(c, func(c *co.Ctx) int {
			defer func() {
				co.Select(c, co.Case(g2, nil))
				after.Store(true)
			}()
			co.Await(c, core.Future[core.Unit](g1))
			return 0
		})
		for !g1.waiting() {
			c.Yield()
		}
		h.Abort()
		_, _ = co.AwaitResult(c, h)
		return nil
	})
	require.NoError(t, err)
	assert.False(t, after.Load())
	assert.Equal(t, 1, g2.Drops())
}

func TestAPanicInABranchPollDropsTheCasesAndFailsTheTask(t *testing.T) {
	g, kept, p := &gate{}, &gate{}, &panicky{}
	_, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		return co.SelectBiased(c, co.Case(g, nil), co.Keep(kept, nil), co.Case(p, nil))
	})
	var je *core.JoinError
	require.ErrorAs(t, err, &je)
	assert.Equal(t, "branch poll failed", je.PanicValue())
	assert.Contains(t, string(je.Stack()), "panicky", "the stack is the poll's, where the panic happened")
	assert.Equal(t, 1, g.Drops())
	assert.Equal(t, 1, p.drops, "the panicking case is dropped, as future.Select's Drop would")
	assert.Equal(t, 0, kept.Drops())
}

func TestASelectLoopOverReadyBranchesLetsOtherTasksRun(t *testing.T) {
	const n = 10_000
	ran := false
	seenBefore := -1
	err := runE(t, newRuntime(t), func(c *co.Ctx) error {
		tx, rx := mpsc.NewUnbounded[int]()
		for i := range n {
			if err := tx.Send(i); err != nil {
				return err
			}
		}
		received := 0
		co.Go(c, func(*co.Ctx) int { ran = true; return 0 })
		var msg core.Result[int]
		for received < n {
			if co.Select(c, co.Case(rx.Recv(), &msg), co.Case(future.Pending[int](), nil)) == 0 {
				received++
			}
			if ran && seenBefore < 0 {
				seenBefore = received
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.True(t, ran)
	assert.Less(t, seenBefore, n, "the other task ran before the loop drained the channel")
}

func TestSelectPanicsOnMisuse(t *testing.T) {
	msg := func(f func()) (m string) {
		defer func() { m, _ = recover().(string) }()
		f()
		return ""
	}
	_, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		assert.Contains(t, msg(func() { co.Select(c) }), "no branches")
		assert.Contains(t, msg(func() { co.Select(c, co.Branch{}) }), "branch 0 is the zero Branch")
		return 0
	})
	require.NoError(t, err)
	assert.Contains(t, msg(func() { co.Select(nil, co.Case(future.Ready(1), nil)) }), "nil *co.Ctx")
}

func TestSelectOfKeptBranchesAllocatesNothing(t *testing.T) {
	a, b := &always{v: 1}, &always{v: 2}
	allocs, err := run(t, newRuntime(t), func(c *co.Ctx) float64 {
		var v int
		return testing.AllocsPerRun(1000, func() {
			co.Select(c, co.Keep(a, &v), co.Keep(b, nil), co.Case(future.Pending[int](), nil))
		})
	})
	require.NoError(t, err)
	assert.Zero(t, allocs)
}

// BenchmarkSelectKept is one Select over three kept branches, one ready.
func BenchmarkSelectKept(b *testing.B) {
	x, y, z := &always{v: 1}, &counted{}, &counted{}
	b.ReportAllocs()
	_, _ = co.Main(newRuntime(b), func(c *co.Ctx) (int, error) {
		var v int
		for b.Loop() {
			co.SelectBiased(c, co.Keep(y, nil), co.Keep(z, nil), co.Keep(x, &v))
		}
		return v, nil
	})
}
