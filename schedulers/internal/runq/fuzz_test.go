package runq_test

import (
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/globalq"
	"github.com/weftrt/weft/schedulers/internal/runq"
	"github.com/weftrt/weft/schedulers/internal/schedtest"
)

// queueModel is the obvious implementation of what two run queues (A and
// B), a thief's pending claim on A, and the global queue must do, as
// slices.
type queueModel struct {
	a, b    []*core.Task
	claimed []*core.Task // claimed from A, not yet released
	// held counts A's positions a claim keeps unusable: the claimed ones
	// and every one the owner popped past the claim, until the release.
	held     int
	global   []*core.Task
	thiefGot []*core.Task // what the outside thief took
}

// modelPush is push on a queue whose slots taken by a claim are claimed.
func (m *queueModel) modelPush(q *[]*core.Task, claimed int, t *core.Task) runq.PushResult {
	switch {
	case len(*q)+claimed < runq.Capacity:
		*q = append(*q, t)
		return runq.Queued
	case claimed > 0:
		m.global = append(m.global, t)
		return runq.OverflowedAroundClaim
	}
	m.global = append(m.global, (*q)[runq.Half:]...)
	m.global = append(m.global, t)
	*q = append([]*core.Task(nil), (*q)[:runq.Half]...)
	return runq.Overflowed
}

// modelSteal moves part of from to the thief's queue, as s splits it, and
// returns the task to run now and the count taken.
func modelSteal(from, to *[]*core.Task, fromClaimed, toClaimed int, s runq.Split) (*core.Task, int) {
	used := len(*to) + toClaimed
	if fromClaimed > 0 || used == runq.Capacity || (s == runq.HalfUp && used > runq.Half) {
		return nil, 0
	}
	n := len(*from) - len(*from)/2
	if s == runq.HalfDown {
		n = min(len(*from)/2, runq.Capacity-used)
	}
	if n == 0 {
		return nil, 0
	}
	taken := (*from)[:n]
	*from = append([]*core.Task(nil), (*from)[n:]...)
	if s == runq.HalfDown {
		*to = append(*to, taken[1:]...)
		return taken[0], n
	}
	*to = append(*to, taken[:n-1]...)
	return taken[n-1], n
}

// FuzzQueueMatchesAModel runs a sequence of queue operations, one byte
// each, on two real run queues and on the model, and checks after every
// step that they agree: what each pop, steal and push returns, what went
// to the global queue, and the queues' lengths. The operations cover
// push, pop, both directions of steal with either split, a third party's
// claim held across other operations, and takes from a global queue.
//
//	go test -fuzz FuzzQueueMatchesAModel -run '^$'
func FuzzQueueMatchesAModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 4, 1})
	f.Add(append(make([]byte, 300), 1, 4, 5, 6, 0, 0, 7, 9, 10))
	// Fill A, claim, fill past full, release, overflow.
	seed := []byte{}
	for i := 0; i < 260; i++ {
		seed = append(seed, 0)
	}
	seed = append(seed, 6, 0, 0, 1, 7, 0, 0, 0)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, ops []byte) {
		var a, b runq.Queue
		var m queueModel
		var rec schedtest.Recorder
		var claim runq.Claim
		pool := schedtest.Tasks(len(ops)*8 + 8)
		next := 0
		fresh := func() *core.Task { x := pool[next]; next++; return x }
		checkGlobal := func() {
			got := rec.All()
			if len(got) != len(m.global) {
				t.Fatalf("global queue has %d tasks, model %d", len(got), len(m.global))
			}
			for i := range got {
				if got[i] != m.global[i] {
					t.Fatalf("global queue differs at %d", i)
				}
			}
		}
		pop := func(step int, q *runq.Queue, mq *[]*core.Task, claimed bool) {
			got := q.Pop()
			var want *core.Task
			if len(*mq) > 0 {
				want, *mq = (*mq)[0], (*mq)[1:]
				if claimed {
					m.held++
				}
			}
			if got != want {
				t.Fatalf("step %d: pop disagrees with the model", step)
			}
		}
		steal := func(step int, from, to *runq.Queue, mfrom, mto *[]*core.Task, fromHeld, toHeld int, s runq.Split) {
			want, wn := modelSteal(mfrom, mto, fromHeld, toHeld, s)
			got, gn := from.StealInto(to, s)
			if got != want || gn != wn {
				t.Fatalf("step %d: steal (split %d) took %d, model %d", step, s, gn, wn)
			}
		}
		for step, op := range ops {
			switch op % 11 {
			case 0: // the owner of A pushes
				x := fresh()
				want := m.modelPush(&m.a, m.held, x)
				if got, _ := a.Push(x, &rec); got != want {
					t.Fatalf("step %d: push on A: %v, model %v", step, got, want)
				}
			case 1: // the owner of A pops
				pop(step, &a, &m.a, claim.Len() != 0)
			case 2: // the owner of B pushes
				x := fresh()
				want := m.modelPush(&m.b, 0, x)
				if got, _ := b.Push(x, &rec); got != want {
					t.Fatalf("step %d: push on B: %v, model %v", step, got, want)
				}
			case 3: // the owner of B pops
				pop(step, &b, &m.b, false)
			case 4: // B steals from A, rounding up
				steal(step, &a, &b, &m.a, &m.b, m.held, 0, runq.HalfUp)
			case 5: // A steals from B, rounding up
				steal(step, &b, &a, &m.b, &m.a, 0, m.held, runq.HalfUp)
			case 6: // an outside thief claims half of A
				if claim.Len() != 0 {
					break
				}
				claim = a.HoldClaim(runq.Capacity)
				want := len(m.a) - len(m.a)/2
				if claim.Len() != want {
					t.Fatalf("step %d: claim took %d, model %d", step, claim.Len(), want)
				}
				m.claimed = append([]*core.Task(nil), m.a[:want]...)
				m.held = want
				m.a = append([]*core.Task(nil), m.a[want:]...)
			case 7: // the outside thief copies and releases its claim
				if claim.Len() == 0 {
					break
				}
				got := claim.Finish()
				for i := range got {
					if got[i] != m.claimed[i] {
						t.Fatalf("step %d: claimed slot %d holds the wrong task", step, i)
					}
				}
				m.thiefGot = append(m.thiefGot, got...)
				claim = runq.Claim{}
				m.claimed = nil
				m.held = 0
			case 8: // A's owner takes from a global queue of k tasks
				k := int(op/11)%8 + 1
				var g globalq.Queue
				var want []*core.Task
				for i := 0; i < k; i++ {
					x := fresh()
					g.Push(x)
					want = append(want, x)
				}
				room := runq.Capacity - len(m.a) - m.held
				count := min(k, min(room, max(runq.Half-len(m.a), 0))+1)
				if got := g.Take(&a, 1); got != want[0] {
					t.Fatalf("step %d: Take returned the wrong task", step)
				}
				m.a = append(m.a, want[1:count]...)
				if g.Len() != k-count {
					t.Fatalf("step %d: Take left %d tasks, model %d", step, g.Len(), k-count)
				}
			case 9: // B steals from A, rounding down
				steal(step, &a, &b, &m.a, &m.b, m.held, 0, runq.HalfDown)
			case 10: // A steals from B, rounding down
				steal(step, &b, &a, &m.b, &m.a, 0, m.held, runq.HalfDown)
			}
			checkGlobal()
			if a.Len() != len(m.a) || b.Len() != len(m.b) {
				t.Fatalf("step %d: lengths %d/%d, model %d/%d", step, a.Len(), b.Len(), len(m.a), len(m.b))
			}
			if want := runq.Capacity - len(m.a) - m.held; a.Room() != want {
				t.Fatalf("step %d: A has room for %d, model %d", step, a.Room(), want)
			}
		}
	})
}
