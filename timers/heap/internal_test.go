package heap

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// checkHeap verifies the heap order and the stored indexes.
func checkHeap(t *testing.T, s *shard) {
	t.Helper()
	for i, e := range s.h {
		if spi.LinksOf(e).Index != i {
			t.Fatalf("entry at %d stores index %d", i, spi.LinksOf(e).Index)
		}
		if p := (i - 1) >> s.log2d; i > 0 && s.h[p].Deadline > e.Deadline {
			t.Fatalf("parent %d (%v) is after its child %d (%v)", p, s.h[p].Deadline, i, e.Deadline)
		}
	}
}

func TestEveryMoveKeepsTheHeapOrderAndTheStoredIndexes(t *testing.T) {
	for _, log2d := range []uint{1, 2, 3, 4} {
		s := newShard(log2d)
		rng := rand.New(rand.NewPCG(uint64(log2d), 1))
		es := make([]*core.TimerEntry, 500)
		for i := range es {
			es[i] = &core.TimerEntry{Deadline: core.Instant(rng.Int64N(1000))}
			s.arm(es[i])
		}
		checkHeap(t, s)
		for range 5000 {
			e := es[rng.IntN(len(es))]
			switch rng.IntN(3) {
			case 0:
				s.cancel(e)
			default:
				e.Deadline = core.Instant(rng.Int64N(1000))
				s.arm(e)
			}
			checkHeap(t, s)
			if len(s.h) > 0 {
				require.Equal(t, int64(s.h[0].Deadline), s.next.Load(), "next publishes the root")
			}
		}
	}
}

func TestAShrunkenHeapGivesBackItsSlice(t *testing.T) {
	s := newShard(2)
	es := make([]*core.TimerEntry, 1<<14)
	for i := range es {
		es[i] = &core.TimerEntry{Deadline: core.Instant(i)}
		s.arm(es[i])
	}
	peak := cap(s.h)
	for _, e := range es[:len(es)-10] {
		s.cancel(e)
	}
	require.Less(t, cap(s.h), peak/4, "capacity follows the armed count down")
	checkHeap(t, s)
}
