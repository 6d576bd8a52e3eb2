package slab

import (
	"testing"

	"github.com/weftrt/weft/core"
)

type rec struct {
	Entry
	name string
}

func TestAStaleHandleDoesNotResolveAfterItsSlotIsReused(t *testing.T) {
	sl := New[rec]()
	a := &rec{name: "a"}
	ha, _ := sl.Insert(a)
	if sl.Get(ha) != a || a.Generation() == 0 {
		t.Fatal("lookup of a fresh handle failed")
	}
	if sl.Remove(ha) != a || sl.Remove(ha) != nil {
		t.Fatal("remove did not return the registration exactly once")
	}
	b := &rec{name: "b"}
	hb, _ := sl.Insert(b)
	if uint32(hb) != uint32(ha) {
		t.Fatalf("the freed slot was not reused (handles %#x, %#x)", ha, hb)
	}
	if sl.Get(ha) != nil {
		t.Fatal("a stale handle resolved to the slot's new registration")
	}
	if sl.Get(hb) != b || sl.Get(0) != nil || sl.Get(core.Handle(1<<40|99999)) != nil {
		t.Fatal("lookup of the new, zero or out-of-range handles is wrong")
	}
}

func TestTheSlabGrowsAcrossPagesAndRefusesInsertsOnceClosed(t *testing.T) {
	sl := New[rec]()
	hs := make([]core.Handle, 3*pageSize)
	for i := range hs {
		hs[i], _ = sl.Insert(&rec{})
	}
	for i, h := range hs {
		if sl.Get(h) == nil {
			t.Fatalf("handle %d lost after growth", i)
		}
	}
	if sl.Len() != len(hs) {
		t.Fatalf("Len = %d, want %d", sl.Len(), len(hs))
	}
	if got := len(sl.CloseAll()); got != len(hs) || sl.Len() != 0 {
		t.Fatalf("CloseAll returned %d of %d", got, len(hs))
	}
	if _, ok := sl.Insert(&rec{}); ok {
		t.Fatal("insert into a closed slab succeeded")
	}
}

func TestADescriptorSlotIsTakenOnceAndItsStaleHandleFailsAfterReuse(t *testing.T) {
	sl := New[rec]()
	a := &rec{}
	ha, err := sl.InsertAt(5, a)
	if err != nil || sl.Get(ha) != a || sl.At(5) != a {
		t.Fatalf("InsertAt = %#x, %v; lookups wrong", ha, err)
	}
	if _, err := sl.InsertAt(5, &rec{}); err != ErrInUse {
		t.Fatalf("a descriptor was registered twice (%v)", err)
	}
	for _, bad := range []int{-1, 1 << 31} {
		if _, err := sl.InsertAt(bad, &rec{}); err != ErrInUse {
			t.Fatalf("InsertAt(%d) = %v, want ErrInUse", bad, err)
		}
	}
	if sl.Remove(ha) != a || sl.At(5) != nil {
		t.Fatal("remove did not empty the descriptor's slot")
	}
	// The kernel reuses the descriptor number.
	b := &rec{}
	hb, err := sl.InsertAt(5, b)
	if err != nil || uint32(hb) != uint32(ha) {
		t.Fatalf("the descriptor's slot was not reused (handles %#x, %#x, %v)", ha, hb, err)
	}
	if sl.Get(ha) != nil || sl.Get(hb) != b {
		t.Fatal("a stale handle resolved to the descriptor's new registration")
	}
	if len(sl.free) != 0 {
		t.Fatal("a descriptor-indexed slab kept a free-list")
	}
}

func TestDescriptorSlotsGrowAcrossPagesAndRefuseInsertsOnceClosed(t *testing.T) {
	sl := New[rec]()
	hs := make([]core.Handle, 3*pageSize)
	for i := range hs {
		hs[i], _ = sl.InsertAt(i, &rec{})
	}
	for i, h := range hs {
		if sl.Get(h) == nil || sl.At(i) == nil {
			t.Fatalf("handle %d lost after growth", i)
		}
	}
	if got := len(sl.CloseAll()); got != len(hs) || sl.Len() != 0 {
		t.Fatalf("CloseAll returned %d of %d", got, len(hs))
	}
	if _, err := sl.InsertAt(1, &rec{}); err != ErrClosed {
		t.Fatalf("insert into a closed slab: %v, want ErrClosed", err)
	}
}

func TestAGenerationNeverWrapsToZero(t *testing.T) {
	sl := New[rec]()
	h, _ := sl.Insert(&rec{})
	sl.gens[0] = ^uint32(0)
	sl.Remove(h)
	h, _ = sl.Insert(&rec{})
	if uint32(h>>32) == 0 {
		t.Fatal("the generation wrapped to zero")
	}
}

// The slab's count is a readiness driver's quiescence: Len is exact after
// every insert, remove and close, and the activation hook runs once per
// insert into an empty slab, with the record already counted.
func TestOnActiveRunsOnEveryInsertIntoAnEmptySlab(t *testing.T) {
	s := New[rec]()
	calls := 0
	s.OnActive(func() {
		if s.count.Quiescent() {
			t.Error("the hook ran before the record was counted")
		}
		calls++
	})
	h1, _ := s.Insert(&rec{name: "a"})
	s.Insert(&rec{name: "b"})
	if calls != 1 || s.Len() != 2 {
		t.Fatalf("two inserts from empty: %d hook calls, len %d", calls, s.Len())
	}
	s.Remove(h1)
	s.Remove(h1) // stale: counts nothing
	if s.Len() != 1 {
		t.Fatalf("len %d after one remove", s.Len())
	}
	s.CloseAll()
	if s.Len() != 0 {
		t.Fatalf("len %d after CloseAll", s.Len())
	}
	s2 := New[rec]()
	s2.OnActive(func() { calls++ })
	h, _ := s2.Insert(&rec{})
	s2.Remove(h)
	s2.Insert(&rec{})
	if calls != 3 {
		t.Fatalf("%d hook calls, want one per transition from empty (3)", calls)
	}
}
