// Package slab maps a driver's handles to its records without a lock on
// the lookup path, and makes stale handles harmless. A handle is
//
//	generation (32 bits) | slot index + 1 (32 bits)
//
// so zero is never a handle, and a handle (or an event token) that
// outlived its registration names a slot whose generation moved on: the
// lookup fails instead of finding whatever was registered in the slot
// since. The slot is picked by the slab (Insert: a free-list of released
// slots, so handles are never descriptor numbers, which the kernel reuses
// at once) or by the caller (InsertAt: a descriptor number, for kqueue,
// whose events name nothing else).
//
// Slots live in pages that are allocated once and never move; the page
// directory is replaced (copied and grown) under the slab's lock, and a
// lookup loads it once, then the slot. Inserts and removals take the lock.
package slab

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/activity"
)

const (
	pageShift = 10
	pageSize  = 1 << pageShift
)

// Entry is embedded in every record a Slab holds: it carries the
// generation of the slot the record was inserted in, which the lookup
// compares with the handle's. It is written by Insert and InsertAt before
// the record is published, and never after.
type Entry struct{ gen uint32 }

// Generation returns the generation of the slot the record was inserted
// in (0 before it is inserted).
func (e *Entry) Generation() uint32 { return e.gen }

func (e *Entry) entry() *Entry { return e }

// Record is the constraint on a slab's records: a pointer to a struct
// that embeds Entry.
type Record[E any] interface {
	*E
	entry() *Entry
}

// page is a block of slots.
type page[E any] [pageSize]atomic.Pointer[E]

// Errors of InsertAt.
var (
	// ErrClosed is returned for an insert after Close.
	ErrClosed = errors.New("slab: closed")
	// ErrInUse is returned for a slot that holds a record already, or an
	// index out of range.
	ErrInUse = errors.New("slab: slot in use")
)

// Slab maps handles to records *E. A slab uses either Insert or InsertAt,
// never both. Every method may be called from any goroutine; Get and At
// take no lock.
type Slab[E any, P Record[E]] struct {
	// dir is the directory of pages. It is replaced under mu; a lookup
	// loads it once. The pages it points to are shared by every copy.
	dir atomic.Pointer[[]*page[E]]

	mu     sync.Mutex
	free   []uint32 // released slot indices, reused last-in first-out (Insert)
	next   uint32   // first index never used (Insert)
	gens   []uint32 // generation of each slot ever used, bumped when it is freed
	closed bool
	// indexed is set by InsertAt: the caller picks the slots, so Remove
	// keeps no free-list.
	indexed bool

	// count is the number of records, changed under mu and read without
	// it. A readiness driver's records are its registrations, so the count
	// is also its core.QuiescentDriver state (see OnActive).
	count activity.Counter
}

// New returns an empty slab.
func New[E any, P Record[E]]() *Slab[E, P] {
	s := &Slab[E, P]{}
	dir := []*page[E]{}
	s.dir.Store(&dir)
	return s
}

// Insert stores r in a free slot and returns its handle, or false if the
// slab was closed.
func (s *Slab[E, P]) Insert(r P) (core.Handle, bool) {
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
	}
	return s.storeLocked(idx, r), true
}

// InsertAt stores r in slot idx (a descriptor number) and returns its
// handle. It fails with ErrClosed after Close, and with ErrInUse if the
// slot holds a record or idx is negative or not below 2³¹.
func (s *Slab[E, P]) InsertAt(idx int, r P) (core.Handle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	s.indexed = true
	if idx < 0 || idx >= 1<<31 {
		return 0, ErrInUse
	}
	if s.At(idx) != nil {
		return 0, ErrInUse
	}
	return s.storeLocked(uint32(idx), r), nil
}

// storeLocked publishes r in slot idx, growing the directory and the
// generations to reach it. The generation is written into r before the
// store that publishes it, so a lookup that finds r sees it.
func (s *Slab[E, P]) storeLocked(idx uint32, r P) core.Handle {
	for uint32(len(s.gens)) <= idx {
		s.gens = append(s.gens, 1)
	}
	dir := *s.dir.Load()
	if need := int(idx>>pageShift) + 1; need > len(dir) {
		grown := make([]*page[E], need)
		copy(grown, dir)
		for i := len(dir); i < need; i++ {
			grown[i] = new(page[E])
		}
		s.dir.Store(&grown)
		dir = grown
	}
	gen := s.gens[idx]
	r.entry().gen = gen
	dir[idx>>pageShift][idx&(pageSize-1)].Store((*E)(r))
	s.count.Add()
	return handleOf(idx, gen)
}

// Get returns the record of h, or nil if h is not (or no longer)
// registered.
func (s *Slab[E, P]) Get(h core.Handle) P {
	if uint32(h) == 0 {
		return nil
	}
	r := s.At(int(uint32(h) - 1))
	if r == nil || r.entry().gen != uint32(h>>32) {
		return nil
	}
	return r
}

// At returns the record in slot idx (for InsertAt, the descriptor's), or
// nil.
func (s *Slab[E, P]) At(idx int) P {
	dir := *s.dir.Load()
	p := idx >> pageShift
	if idx < 0 || p >= len(dir) {
		return nil
	}
	return P(dir[p][idx&(pageSize-1)].Load())
}

// Remove unregisters h and returns its record, or nil if h is stale. The
// slot's generation moves on, so h never resolves again.
func (s *Slab[E, P]) Remove(h core.Handle) P {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.Get(h)
	if r == nil {
		return nil
	}
	idx := uint32(h) - 1
	(*s.dir.Load())[idx>>pageShift][idx&(pageSize-1)].Store(nil)
	s.gens[idx]++
	if s.gens[idx] == 0 {
		s.gens[idx] = 1 // never generation 0 after a wrap
	}
	if !s.indexed {
		s.free = append(s.free, idx)
	}
	s.count.Done()
	return r
}

// CloseAll refuses further inserts, empties the slab and returns what it
// held.
func (s *Slab[E, P]) CloseAll() []P {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var out []P
	for _, p := range *s.dir.Load() {
		for i := range p {
			if r := p[i].Swap(nil); r != nil {
				out = append(out, P(r))
				s.count.Done()
			}
		}
	}
	return out
}

// Len returns the number of registered handles.
func (s *Slab[E, P]) Len() int { return s.count.Len() }

// OnActive sets fn (nil: none), which an insert into an empty slab calls
// once the record is counted, under the slab's lock: the activation hook
// of core.QuiescentDriver for a driver whose registrations are the slab's
// records. fn must not block or call back into the slab.
func (s *Slab[E, P]) OnActive(fn func()) { s.count.OnActive(fn) }

func handleOf(idx, gen uint32) core.Handle {
	return core.Handle(uint64(gen)<<32 | uint64(idx+1))
}
