package waitq_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

type waiter struct {
	node waitq.Node[waiter]
	id   int
}

func ids(l *waitq.List[waiter]) []int {
	var out []int
	var tmp waitq.List[waiter]
	for w := l.PopFront(); w != nil; w = l.PopFront() {
		out = append(out, w.id)
		tmp.PushBack(&w.node, w)
	}
	tmp.TakeAll(l)
	return out
}

func TestZeroListIsEmpty(t *testing.T) {
	var l waitq.List[waiter]
	assert.True(t, l.Empty())
	assert.Nil(t, l.Front())
	assert.Nil(t, l.PopFront())
	assert.Equal(t, 0, l.Len())
}

func TestListIsFIFOAndUnlinksFromTheMiddleInPlace(t *testing.T) {
	var l waitq.List[waiter]
	ws := make([]*waiter, 5)
	for i := range ws {
		ws[i] = &waiter{id: i}
		l.PushBack(&ws[i].node, ws[i])
	}
	assert.True(t, ws[2].node.Unlink())
	assert.False(t, ws[2].node.Unlink(), "a second unlink does nothing")
	assert.False(t, ws[2].node.Linked())
	assert.Equal(t, []int{0, 1, 3, 4}, ids(&l))
	assert.Equal(t, 0, l.Front().id)
	assert.Equal(t, 4, l.Len())
}

func TestTakeAllMovesEveryWaiterWhichCanStillUnlinkItself(t *testing.T) {
	var a, b waitq.List[waiter]
	ws := make([]*waiter, 4)
	for i := range ws {
		ws[i] = &waiter{id: i}
	}
	b.PushBack(&ws[0].node, ws[0])
	for _, w := range ws[1:] {
		a.PushBack(&w.node, w)
	}
	a.TakeAll(&b)
	assert.True(t, a.Empty())
	ws[2].node.Unlink()
	assert.Equal(t, []int{0, 1, 3}, ids(&b))
	a.TakeAll(&b) // empty: no-op
	assert.Equal(t, 3, b.Len())
}

func TestPushingALinkedNodePanics(t *testing.T) {
	var l waitq.List[waiter]
	w := &waiter{}
	l.PushBack(&w.node, w)
	assert.Panics(t, func() { l.PushBack(&w.node, w) })
}

type counter struct{ n int }

func (c *counter) Wake() { c.n++ }

func TestWakeListReportsFullAndWakesEverything(t *testing.T) {
	var wl waitq.WakeList
	cs := make([]*counter, 20)
	full := -1
	for i := range cs {
		cs[i] = &counter{}
		if !wl.Push(cs[i]) {
			full = i
			break
		}
	}
	require.Equal(t, 15, full, "the list holds 16 wakers")
	assert.True(t, wl.Push(nil) == false, "still full")
	wl.WakeAll(nil)
	assert.Equal(t, 0, wl.Len())
	for i := 0; i <= full; i++ {
		assert.Equal(t, 1, cs[i].n)
	}
	waitq.Wake(nil, nil) // a nil waker is ignored
	waitq.Wake(core.NewContext(nil), cs[0])
	assert.Equal(t, 2, cs[0].n)
}

// FuzzListMatchesASlice pushes, pops, unlinks arbitrary members and moves
// the list, checking the order against a slice.
func FuzzListMatchesASlice(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 2, 1, 3, 0, 2, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var l waitq.List[waiter]
		var model []*waiter
		next := 0
		for i := 0; i < len(ops); i++ {
			switch ops[i] % 4 {
			case 0:
				w := &waiter{id: next}
				next++
				l.PushBack(&w.node, w)
				model = append(model, w)
			case 1:
				got := l.PopFront()
				if len(model) == 0 {
					if got != nil {
						t.Fatalf("pop from empty list returned %d", got.id)
					}
					continue
				}
				if got != model[0] {
					t.Fatalf("pop returned the wrong waiter")
				}
				model = model[1:]
			case 2:
				if len(model) == 0 || i+1 >= len(ops) {
					continue
				}
				i++
				k := int(ops[i]) % len(model)
				if !model[k].node.Unlink() {
					t.Fatalf("unlink of a linked waiter failed")
				}
				model = append(model[:k], model[k+1:]...)
			case 3:
				var other waitq.List[waiter]
				l.TakeAll(&other)
				other.TakeAll(&l)
			}
			if l.Len() != len(model) || l.Empty() != (len(model) == 0) {
				t.Fatalf("len %d, want %d", l.Len(), len(model))
			}
		}
		for _, w := range model {
			if got := l.PopFront(); got != w {
				t.Fatalf("final order differs")
			}
		}
	})
}
