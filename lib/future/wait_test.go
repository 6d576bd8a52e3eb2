package future_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

func TestWaitReturnsTheOutputOfAReadyFuture(t *testing.T) {
	require.Equal(t, 42, future.Wait(future.Ready(42)))
	require.Equal(t, "x", future.Wait(future.Lazy(func() string { return "x" })))
}

func TestWaitParksUntilTheFutureIsWokenFromAnotherGoroutine(t *testing.T) {
	wakers := make(chan core.Waker, 1)
	var released atomic.Bool
	var polls atomic.Int32
	f := future.FromFunc(func(cx *core.Context) (string, bool) {
		n := polls.Add(1)
		if released.Load() {
			return "woken", true
		}
		if n == 1 {
			wakers <- cx.Waker()
		}
		return "", false
	})
	var wg sync.WaitGroup
	wg.Go(func() {
		w := <-wakers
		released.Store(true)
		w.Wake()
	})
	require.Equal(t, "woken", future.Wait(f))
	wg.Wait()
	require.EqualValues(t, 2, polls.Load(), "Wait polls once per wake and never spins")
}

func TestWaitKeepsAWakeThatArrivesDuringAPoll(t *testing.T) {
	polls := 0
	f := future.FromFunc(func(cx *core.Context) (int, bool) {
		polls++
		if polls == 2 {
			return 2, true
		}
		cx.Waker().Wake() // woken before the poll even returns
		return 0, false
	})
	require.Equal(t, 2, future.Wait(f))
}

type panicky struct{ drops int }

func (p *panicky) Poll(*core.Context) (int, bool) { panic("poll failed") }
func (p *panicky) Drop()                          { p.drops++ }

func TestWaitDropsTheFutureWhenItsPollPanics(t *testing.T) {
	p := &panicky{}
	require.PanicsWithValue(t, "poll failed", func() { future.Wait[int](p) })
	require.Equal(t, 1, p.drops)
}

func TestWaitDoesNotDropAFutureThatCompleted(t *testing.T) {
	p := newProbe("p", 1)
	p.readyOnPoll = 1
	future.Wait[int](p)
	require.Zero(t, p.Drops())
}

func TestJoinAllUnderWaitWithChildrenWokenFromOtherGoroutines(t *testing.T) {
	const n, nudges = 64, 20
	for round := range 10 {
		ps := strictProbes(n)
		for _, p := range ps {
			p.strict = false // concurrent wakes: check polls <= wakes+1 below
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, p := range ps {
			wg.Go(func() {
				<-start
				for range nudges {
					p.Nudge()
				}
				p.Release()
			})
		}
		f := future.JoinAll(asFutures(ps))
		close(start)
		got := future.Wait(f)
		wg.Wait()

		want := make([]int, n)
		for i := range want {
			want[i] = i * 100
		}
		require.Equal(t, want, got, "round %d", round)
		for i, p := range ps {
			require.Zero(t, p.Drops(), "child %d", i)
			require.LessOrEqual(t, p.Polls(), p.WakesIssued()+1, "child %d polled more than it was woken", i)
		}
		requireNoViolations(t, ps...)
	}
}

func TestSelectUnderWaitWithConcurrentWakesDropsEachLoserOnce(t *testing.T) {
	const n = 8
	for round := range 50 {
		ps := probes("branch", 0, 1, 2, 3, 4, 5, 6, 7)
		winner := round % n
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, p := range ps {
			wg.Go(func() {
				<-start
				for range 10 {
					p.Nudge() // spurious wakes, racing with the poll and the drops
				}
				if i == winner {
					p.Release()
				}
			})
		}
		f := future.Select(asFutures(ps)...)
		close(start)
		got := future.Wait(f)
		wg.Wait()

		require.Equal(t, winner, got.Index)
		require.Equal(t, winner, got.Value)
		for i, p := range ps {
			if i == winner {
				require.Zero(t, p.Drops())
			} else {
				require.Equal(t, 1, p.Drops(), "loser %d", i)
			}
		}
		requireNoViolations(t, ps...)
	}
}

func TestNestedCombinatorsUnderWaitRouteWakesThroughEveryLevel(t *testing.T) {
	// JoinAll of Selects of probes: a child's wake goes through the
	// Select's waker (a JoinAll child waker) up to Wait's parker.
	const groups = 16
	for range 10 {
		var all []*probe[int]
		sels := make([]core.Future[future.Selected[int]], groups)
		winners := make([]*probe[int], groups)
		for g := range sels {
			ps := probes("branch", g*10, g*10+1, g*10+2)
			all = append(all, ps...)
			winners[g] = ps[g%3]
			sels[g] = future.Select(asFutures(ps)...)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, p := range all {
			wg.Go(func() {
				<-start
				p.Nudge()
				p.Nudge()
			})
		}
		for _, p := range winners {
			wg.Go(func() {
				<-start
				p.Release()
			})
		}
		f := future.JoinAll(sels)
		close(start)
		got := future.Wait(f)
		wg.Wait()

		for g, s := range got {
			require.Equal(t, g%3, s.Index)
			require.Equal(t, g*10+g%3, s.Value)
		}
		for _, p := range all {
			if p.Drops() > 1 {
				t.Fatalf("%s dropped %d times", p.name, p.Drops())
			}
		}
		requireNoViolations(t, all...)
	}
}

func TestTryJoinAllUnderWaitDropsThePendingChildrenOnceWhileTheyAreBeingWoken(t *testing.T) {
	const n = 16
	boom := errors.New("boom")
	for round := range 20 {
		vals := make([]core.Result[int], n)
		failing := round % n
		vals[failing].Err = boom
		ps := probes("child", vals...)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i, p := range ps {
			wg.Go(func() {
				<-start
				for range 10 {
					p.Nudge()
				}
				if i == failing {
					p.Release()
				}
			})
		}
		f := future.TryJoinAll(asFutures(ps))
		close(start)
		r := future.Wait(f)
		wg.Wait()

		require.ErrorIs(t, r.Err, boom)
		for i, p := range ps {
			want := 1
			if i == failing {
				want = 0
			}
			require.Equal(t, want, p.Drops(), "child %d", i)
		}
		requireNoViolations(t, ps...)
	}
}
