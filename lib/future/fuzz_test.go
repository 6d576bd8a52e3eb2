package future_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

// schedule decodes a fuzz input into a run of a combinator driven the way an
// executor drives a task: it is polled first, then only after its waker was
// woken. Each byte after the first is one step: its low two bits choose
// release (the child becomes ready and wakes), nudge (a spurious wake) or a
// poll if the parent was woken; its high bits choose the child and, for a
// poll, the budget the poll gets (0 to 7 units, or unconstrained).
type schedule struct {
	data []byte
	n    int
}

func newSchedule(data []byte, maxChildren int) (schedule, bool) {
	if len(data) == 0 {
		return schedule{}, false
	}
	return schedule{data: data[1:], n: 1 + int(data[0])%maxChildren}, true
}

// budgetFor maps a step byte to the budget of a poll: 8 means a full one.
func budgetFor(b byte) int {
	if u := int(b>>5) & 7; u < 7 {
		return u
	}
	return core.Budget
}

func FuzzJoinAllUnderRandomSchedules(f *testing.F) {
	f.Add([]byte{3, 0, 2, 4, 6, 1, 2, 8, 10})
	f.Add([]byte{7, 1, 5, 9, 2, 2, 0, 0, 4, 8, 12, 16, 20, 24, 28, 2})
	f.Add([]byte{0})
	f.Add([]byte{5, 2, 34, 66, 98, 130, 1, 5, 9, 13, 2, 226})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := newSchedule(data, 8)
		if !ok {
			return
		}
		ps := strictProbes(s.n)
		for i, p := range ps {
			p.budgeted = i%3 == 0 // some children spend budget like resources
		}
		fut := future.JoinAll(asFutures(ps))
		w := &countingWaker{}
		cx, setBudget := budgetContext(w, core.Budget)

		var out []int
		done := false
		seen := int64(0)
		poll := func(units int) {
			seen = w.Count()
			setBudget(units)
			if v, ok := fut.Poll(cx); ok {
				out, done = v, true
			}
		}
		poll(core.Budget)
		for _, b := range s.data {
			if done {
				break
			}
			k := int(b>>2) % s.n
			switch b & 3 {
			case 0:
				ps[k].Release()
			case 1:
				ps[k].Nudge()
			default:
				if w.Count() > seen {
					poll(budgetFor(b))
				}
			}
		}
		for _, p := range ps {
			p.Release()
		}
		// An executor now polls only when woken; no wake may have been
		// lost, so this ends with JoinAll ready.
		for i := 0; !done; i++ {
			require.Greater(t, w.Count(), seen, "JoinAll is pending but its waker was never woken: a lost wake")
			require.Less(t, i, 2*s.n+4, "JoinAll keeps asking to be polled without finishing")
			poll(core.Budget)
		}

		want := make([]int, s.n)
		for i := range want {
			want[i] = i * 100
		}
		require.Equal(t, want, out)
		for i, p := range ps {
			require.Zero(t, p.Drops(), "child %d completed and must not be dropped", i)
		}
		requireNoViolations(t, ps...)
	})
}

func FuzzSelectUnderRandomSchedules(f *testing.F) {
	f.Add([]byte{3, 1, 2, 4, 2})
	f.Add([]byte{4, 0, 4, 8, 12, 2})
	f.Add([]byte{1})
	f.Add([]byte{6, 5, 9, 2, 34, 66, 8, 2, 226})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := newSchedule(data, 6)
		if !ok {
			return
		}
		vals := make([]int, s.n)
		for i := range vals {
			vals[i] = i
		}
		ps := probes("branch", vals...)
		for i, p := range ps {
			p.budgeted = i%2 == 1
		}
		fut := future.Select(asFutures(ps)...)
		w := &countingWaker{}
		cx, setBudget := budgetContext(w, core.Budget)

		released := make([]bool, s.n)
		var won future.Selected[int]
		done := false
		seen := int64(0)
		poll := func(units int) {
			seen = w.Count()
			setBudget(units)
			if v, ok := fut.Poll(cx); ok {
				won, done = v, true
			}
		}
		poll(core.Budget)
		for _, b := range s.data {
			if done {
				break
			}
			k := int(b>>2) % s.n
			switch b & 3 {
			case 0:
				released[k] = true
				ps[k].Release()
			case 1:
				ps[k].Nudge()
			default:
				if w.Count() > seen {
					poll(budgetFor(b))
				}
			}
		}
		if !done {
			released[0] = true
			ps[0].Release()
		}
		for i := 0; !done; i++ {
			require.Greater(t, w.Count(), seen, "Select is pending but its waker was never woken: a lost wake")
			require.Less(t, i, 4, "Select keeps asking to be polled without finishing")
			poll(core.Budget)
		}

		require.True(t, released[won.Index], "branch %d won without being ready", won.Index)
		require.Equal(t, won.Index, won.Value)
		for i, p := range ps {
			want := 1
			if i == won.Index {
				want = 0
			}
			require.Equal(t, want, p.Drops(), "branch %d", i)
		}
		core.Drop(fut)
		requireNoViolations(t, ps...)
	})
}
