//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// A handle is
//
//	generation (32 bits) | descriptor + 1 (32 bits)
//
// The slab is indexed by descriptor number, because a kevent names its
// descriptor (ident) and nothing else the driver could use: the udata
// field is a pointer on most of the BSDs, and an integer token stored in a
// pointer field would be seen by Go's garbage collector. A descriptor is
// registered at most once while it is open, so its number identifies the
// registration; when the handle is closed the slot's generation moves on,
// so a stale handle never reaches the registration of a later descriptor
// that reuses the number (the lookup fails, the operation reports
// net.ErrClosed). An event the kernel queued for the old descriptor and
// the driver dispatches after the number was reused reaches the new
// registration as a spurious readiness, which costs one EAGAIN: readiness
// is only a hint. Zero is never a handle.
const (
	pageShift = 10
	pageSize  = 1 << pageShift
)

// page is a block of slots. Pages are allocated once and never move, so a
// lookup that loaded the directory can index a page without a lock.
type page [pageSize]atomic.Pointer[scheduledIO]

// slab maps descriptors and handles to their scheduledIO. Lookups (every
// operation, every event) take no lock: they load the directory, then the
// slot. Inserts and removals take mu.
type slab struct {
	// dir is the directory of pages. It is replaced (copied and grown)
	// under mu; a lookup loads it once. The pages it points to are shared
	// by every copy.
	dir atomic.Pointer[[]*page]

	mu     sync.Mutex
	gens   map[int]uint32 // generation of each slot that was ever used
	count  int
	closed bool
}

func newSlab() *slab {
	s := &slab{gens: map[int]uint32{}}
	dir := []*page{}
	s.dir.Store(&dir)
	return s
}

// errSlotInUse is returned by insert for a descriptor that is already
// registered, which would mean a descriptor was closed behind the
// driver's back.
var errSlotInUse = errors.New("kqueue: descriptor already registered")

// insert stores io in the slot of its descriptor (io.fd.n) and returns its
// handle; it fails if the slab was closed (the driver is shutting down).
func (s *slab) insert(io *scheduledIO) (core.Handle, error) {
	fd := io.fd.n
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errDriverClosed
	}
	if fd < 0 || fd >= 1<<31 {
		return 0, errSlotInUse
	}
	dir := *s.dir.Load()
	if need := fd>>pageShift + 1; need > len(dir) {
		grown := make([]*page, need)
		copy(grown, dir)
		for i := len(dir); i < need; i++ {
			grown[i] = new(page)
		}
		s.dir.Store(&grown)
		dir = grown
	}
	slot := &dir[fd>>pageShift][fd&(pageSize-1)]
	if slot.Load() != nil {
		return 0, errSlotInUse
	}
	gen, ok := s.gens[fd]
	if !ok {
		gen = 1
		s.gens[fd] = gen
	}
	io.gen = gen
	slot.Store(io)
	s.count++
	return handleOf(fd, gen), nil
}

// get returns the scheduledIO of h, or nil if h is not (or no longer)
// registered.
func (s *slab) get(h core.Handle) *scheduledIO {
	if uint32(h) == 0 {
		return nil
	}
	io := s.byFD(int(uint32(h) - 1))
	if io == nil || io.gen != uint32(h>>32) {
		return nil
	}
	return io
}

// byFD returns the registration of descriptor fd, or nil.
func (s *slab) byFD(fd int) *scheduledIO {
	dir := *s.dir.Load()
	p := fd >> pageShift
	if fd < 0 || p >= len(dir) {
		return nil
	}
	return dir[p][fd&(pageSize-1)].Load()
}

// remove unregisters h and returns its scheduledIO, or nil if h is stale.
// The slot's generation moves on, so h never resolves again.
func (s *slab) remove(h core.Handle) *scheduledIO {
	s.mu.Lock()
	defer s.mu.Unlock()
	io := s.get(h)
	if io == nil {
		return nil
	}
	fd := int(uint32(h) - 1)
	(*s.dir.Load())[fd>>pageShift][fd&(pageSize-1)].Store(nil)
	s.gens[fd]++
	if s.gens[fd] == 0 {
		s.gens[fd] = 1 // never generation 0 after a wrap
	}
	s.count--
	return io
}

// closeAll refuses further inserts, empties the slab and returns what it
// held.
func (s *slab) closeAll() []*scheduledIO {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	var out []*scheduledIO
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

func handleOf(fd int, gen uint32) core.Handle {
	return core.Handle(uint64(gen)<<32 | uint64(uint32(fd)+1))
}
