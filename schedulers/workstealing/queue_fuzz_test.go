package workstealing

import (
	"testing"

	"github.com/weftrt/weft/core"
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
func (m *queueModel) modelPush(q *[]*core.Task, claimed int, t *core.Task) pushOutcome {
	switch {
	case len(*q)+claimed < queueCapacity:
		*q = append(*q, t)
		return pushedLocal
	case claimed > 0:
		m.global = append(m.global, t)
		return pushedAroundClaim
	}
	m.global = append(m.global, (*q)[queueHalf:]...)
	m.global = append(m.global, t)
	*q = append([]*core.Task(nil), (*q)[:queueHalf]...)
	return pushedOverflow
}

// modelSteal moves half of from, rounded up, to the thief's queue and
// returns the last task moved.
func modelSteal(from, to *[]*core.Task, fromClaimed, toClaimed int) (*core.Task, int) {
	if len(*to)+toClaimed > queueHalf || fromClaimed > 0 {
		return nil, 0
	}
	n := len(*from) - len(*from)/2
	if n == 0 {
		return nil, 0
	}
	taken := (*from)[:n]
	*from = append([]*core.Task(nil), (*from)[n:]...)
	*to = append(*to, taken[:n-1]...)
	return taken[n-1], n
}

// FuzzQueueMatchesAModel runs a sequence of queue operations, one byte
// each, on two real run queues and on the model, and checks after every
// step that they agree: what each pop, steal and push returns, what went
// to the global queue, and the queues' lengths. The operations cover
// push, pop, both directions of steal, a third party's claim held across
// other operations, and batch pushes from the global queue.
//
//	go test -fuzz FuzzQueueMatchesAModel -run '^$'
func FuzzQueueMatchesAModel(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 4, 1})
	f.Add(append(make([]byte, 300), 1, 4, 5, 6, 0, 0, 7))
	// Fill A, claim, fill past full, release, overflow.
	seed := []byte{}
	for i := 0; i < 260; i++ {
		seed = append(seed, 0)
	}
	seed = append(seed, 6, 0, 0, 1, 7, 0, 0, 0)
	f.Add(seed)
	f.Fuzz(func(t *testing.T, ops []byte) {
		var a, b localQueue
		var m queueModel
		var rec recorder
		claimFirst, claimN := uint32(0), uint32(0)
		pool := newTasks(len(ops)*8 + 8)
		next := 0
		fresh := func() *core.Task { x := pool[next]; next++; return x }
		checkGlobal := func() {
			var got []*core.Task
			for _, c := range rec.calls {
				got = append(got, c...)
			}
			if len(got) != len(m.global) {
				t.Fatalf("global queue has %d tasks, model %d", len(got), len(m.global))
			}
			for i := range got {
				if got[i] != m.global[i] {
					t.Fatalf("global queue differs at %d", i)
				}
			}
		}
		for step, op := range ops {
			switch op % 9 {
			case 0: // the owner of A pushes
				x := fresh()
				want := m.modelPush(&m.a, m.held, x)
				if got := a.push(x, &rec); got != want {
					t.Fatalf("step %d: push on A: %v, model %v", step, got, want)
				}
			case 1: // the owner of A pops
				got := a.pop()
				var want *core.Task
				if len(m.a) > 0 {
					want, m.a = m.a[0], m.a[1:]
					if claimN != 0 {
						m.held++
					}
				}
				if got != want {
					t.Fatalf("step %d: pop on A disagrees with the model", step)
				}
			case 2: // the owner of B pushes
				x := fresh()
				want := m.modelPush(&m.b, 0, x)
				if got := b.push(x, &rec); got != want {
					t.Fatalf("step %d: push on B: %v, model %v", step, got, want)
				}
			case 3: // the owner of B pops
				got := b.pop()
				var want *core.Task
				if len(m.b) > 0 {
					want, m.b = m.b[0], m.b[1:]
				}
				if got != want {
					t.Fatalf("step %d: pop on B disagrees with the model", step)
				}
			case 4: // B steals from A
				want, wn := modelSteal(&m.a, &m.b, m.held, 0)
				got, gn := a.stealInto(&b)
				if got != want || gn != wn {
					t.Fatalf("step %d: steal A->B took %d, model %d", step, gn, wn)
				}
			case 5: // A steals from B
				want, wn := modelSteal(&m.b, &m.a, 0, m.held)
				got, gn := b.stealInto(&a)
				if got != want || gn != wn {
					t.Fatalf("step %d: steal B->A took %d, model %d", step, gn, wn)
				}
			case 6: // an outside thief claims half of A
				if claimN != 0 {
					break
				}
				claimFirst, claimN = a.claim()
				want := len(m.a) - len(m.a)/2
				if int(claimN) != want {
					t.Fatalf("step %d: claim took %d, model %d", step, claimN, want)
				}
				m.claimed = append([]*core.Task(nil), m.a[:want]...)
				m.held = want
				m.a = append([]*core.Task(nil), m.a[want:]...)
			case 7: // the outside thief copies and releases its claim
				if claimN == 0 {
					break
				}
				for i := uint32(0); i < claimN; i++ {
					slot := &a.buf[(claimFirst+i)&queueMask]
					if *slot != m.claimed[i] {
						t.Fatalf("step %d: claimed slot %d holds the wrong task", step, i)
					}
					m.thiefGot = append(m.thiefGot, *slot)
					*slot = nil
				}
				a.release(claimFirst)
				claimN = 0
				m.claimed = nil
				m.held = 0
			case 8: // A's owner takes a batch from a global queue
				room := max(a.remaining()-queueHalf, 0)
				k := min(int(op/9)%8+1, room+1)
				var g injectQueue
				var want []*core.Task
				for i := 0; i < k; i++ {
					x := fresh()
					g.push(x)
					want = append(want, x)
				}
				if got := g.popInto(k, &a); got != want[0] {
					t.Fatalf("step %d: popInto returned the wrong task", step)
				}
				m.a = append(m.a, want[1:]...)
				if !g.isEmpty() {
					t.Fatalf("step %d: popInto left %d tasks", step, g.len())
				}
			}
			checkGlobal()
			if a.len() != len(m.a) || b.len() != len(m.b) {
				t.Fatalf("step %d: lengths %d/%d, model %d/%d", step, a.len(), b.len(), len(m.a), len(m.b))
			}
			if want := queueCapacity - len(m.a) - m.held; a.remaining() != want {
				t.Fatalf("step %d: A has room for %d, model %d", step, a.remaining(), want)
			}
		}
	})
}
