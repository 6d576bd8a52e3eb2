//go:build linux

package iouring

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// A handle (and the key of its record) is
//
//	generation (32 bits) | slot index + 1 (32 bits)
//
// so zero is never a handle (no valid handle), and a
// handle or an event that outlived its registration names a slot whose
// generation moved on: the lookup fails instead of finding whatever was
// registered in the slot since. Handles are never descriptor numbers,
// which the kernel reuses at once.
const (
	pageShift = 10
	pageSize  = 1 << pageShift
)

// page is a block of slots. Pages are allocated once and never move, so a
// lookup that loaded the directory can index a page without a lock.
type page [pageSize]atomic.Pointer[fileRec]

// slab maps handles to their fileRec. Lookups (every operation, every
// event) take no lock: they load the directory, then the slot. Inserts and
// removals take mu.
type slab struct {
	// dir is the directory of pages. It is replaced (copied and grown)
	// under mu; a lookup loads it once. The pages it points to are shared
	// by every copy.
	dir atomic.Pointer[[]*page]

	mu     sync.Mutex
	free   []uint32 // released slot indices, reused last-in first-out
	next   uint32   // first index never used
	gens   []uint32 // generation of each slot, bumped when it is freed
	count  int
	closed bool
}

func newSlab() *slab {
	s := &slab{}
	dir := []*page{}
	s.dir.Store(&dir)
	return s
}

// insert stores io in a free slot and returns its handle, or false if the
// slab was closed (the driver is shutting down).
func (s *slab) insert(io *fileRec) (core.Handle, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, false
	}
	var idx uint32
	if n := len(s.free); n > 0 {
		idx = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		idx = s.next
		s.next++
		s.gens = append(s.gens, 1)
		dir := *s.dir.Load()
		if int(idx>>pageShift) >= len(dir) {
			grown := make([]*page, len(dir)+1)
			copy(grown, dir)
			grown[len(dir)] = new(page)
			s.dir.Store(&grown)
		}
	}
	io.gen = s.gens[idx]
	(*s.dir.Load())[idx>>pageShift][idx&(pageSize-1)].Store(io)
	s.count++
	return handleOf(idx, io.gen), true
}

// get returns the fileRec of h, or nil if h is not (or no longer)
// registered.
func (s *slab) get(h core.Handle) *fileRec {
	idx, gen := uint32(h)-1, uint32(h>>32)
	dir := *s.dir.Load()
	p := idx >> pageShift
	if uint32(h) == 0 || int(p) >= len(dir) {
		return nil
	}
	io := dir[p][idx&(pageSize-1)].Load()
	if io == nil || io.gen != gen {
		return nil
	}
	return io
}

// remove unregisters h and returns its fileRec, or nil if h is stale.
// The slot's generation moves on, so h never resolves again.
func (s *slab) remove(h core.Handle) *fileRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	io := s.get(h)
	if io == nil {
		return nil
	}
	idx := uint32(h) - 1
	(*s.dir.Load())[idx>>pageShift][idx&(pageSize-1)].Store(nil)
	s.gens[idx]++
	s.free = append(s.free, idx)
	s.count--
	return io
}

// closeAll refuses further inserts, empties the slab and returns what it
// held.
func (s *slab) closeAll() []*fileRec {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var out []*fileRec
	for _, p := range *s.dir.Load() {
		for i := range p {
			if io := p[i].Swap(nil); io != nil {
				out = append(out, io)
			}
		}
	}
	s.count = 0
	return out
}

// len returns the number of registered handles.
func (s *slab) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

func handleOf(idx, gen uint32) core.Handle {
	return core.Handle(uint64(gen)<<32 | uint64(idx+1))
}
