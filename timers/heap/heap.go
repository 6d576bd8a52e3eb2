package heap

import (
	"math/bits"
	"time"
	"unsafe"

	"github.com/weftrt/weft/core"
)

// MaxShards bounds the shard count a Heap accepts.
const MaxShards = 1024

// DefaultArity is the number of children per node unless configured.
const DefaultArity = 4

// Heap is a sharded d-ary min-heap timer implementing [core.Timer] with
// full clock precision. All methods may be called from any goroutine. An
// entry belongs to one Heap at a time, and its owner does not call Insert,
// Reset or Cancel for it from two goroutines at once (Fire may run
// concurrently with any of them).
type Heap struct {
	shards []*shard
	// shift turns an address hash into a shard index: 64 - log2(shards),
	// which is 64 (index always 0) for a single shard.
	shift uint
}

var _ core.Timer = (*Heap)(nil)

// New returns a heap timer with the given number of shards (rounded up to
// a power of two, clamped to [1, MaxShards]) and arity (2, 4, 8 or 16;
// anything else means [DefaultArity]). The clock is accepted for symmetry
// with other timers; a heap keys on deadlines alone.
func New(clock core.Clock, shards, arity int) *Heap {
	_ = clock
	shards = max(1, min(shards, MaxShards))
	n := 1 << bits.Len(uint(shards-1))
	if !validArity(arity) {
		arity = DefaultArity
	}
	log2d := uint(bits.TrailingZeros(uint(arity)))
	h := &Heap{shards: make([]*shard, n), shift: uint(64 - bits.Len(uint(n-1)))}
	for i := range h.shards {
		// One allocation per shard keeps each shard's lock and next word
		// off its neighbours' cache lines.
		h.shards[i] = newShard(log2d)
	}
	return h
}

func validArity(d int) bool { return d == 2 || d == 4 || d == 8 || d == 16 }

// ShardsFor returns the default shard count for a runtime with the given
// number of workers: one for a single worker, otherwise sixteen per worker.
func ShardsFor(workers int) int {
	if workers <= 1 {
		return 1
	}
	return min(16*workers, MaxShards)
}

// Shards returns the number of shards.
func (h *Heap) Shards() int { return len(h.shards) }

// Resolution returns one nanosecond: the heap does not round deadlines.
// The timer conformance suite uses it to know how late an entry may fire.
func (h *Heap) Resolution() time.Duration { return time.Nanosecond }

// shardOf maps e to its shard: a Fibonacci hash of the 8 KiB page holding
// e (see "Sharding" in the package documentation).
func (h *Heap) shardOf(e *core.TimerEntry) *shard {
	page := uint64(uintptr(unsafe.Pointer(e)) >> pageShift)
	return h.shards[(page*0x9E3779B97F4A7C15)>>h.shift]
}

// pageShift is log2 of the Go allocator's page size. Small objects that one
// P allocates in a row come from the same span of pages, so hashing the page
// rather than the object keeps a worker's entries on one shard.
const pageShift = 13

// Insert arms e at e.Deadline. An entry already armed in this heap is
// moved, as by Reset. A deadline that has passed fires at the next Fire.
func (h *Heap) Insert(e *core.TimerEntry) {
	s := h.shardOf(e)
	s.mu.Lock()
	s.arm(e)
	s.mu.Unlock()
}

// Reset moves e to deadline, arming it again if it fired or was cancelled.
func (h *Heap) Reset(e *core.TimerEntry, deadline core.Instant) {
	s := h.shardOf(e)
	s.mu.Lock()
	e.Deadline = deadline
	s.arm(e)
	s.mu.Unlock()
}

// Cancel disarms e and reports whether it was armed. After it returns e is
// not marked fired by this heap; a wake taken by a Fire that won the race
// may still be delivered (see "Firing and wakers").
func (h *Heap) Cancel(e *core.TimerEntry) bool {
	s := h.shardOf(e)
	s.mu.Lock()
	ok := s.cancel(e)
	s.mu.Unlock()
	return ok
}

// NextDeadline returns the earliest armed deadline, exactly.
func (h *Heap) NextDeadline() (core.Instant, bool) {
	next := int64(never)
	for _, s := range h.shards {
		next = min(next, s.next.Load())
	}
	if next == never {
		return 0, false
	}
	return core.Instant(next), true
}

// Fire fires every entry whose deadline is at or before now, earliest
// first within each shard, and returns how many it fired. Shards whose root
// is not due are skipped without taking their lock. Wakers run on the
// calling goroutine, outside every lock.
func (h *Heap) Fire(now core.Instant) int {
	fired := 0
	for _, s := range h.shards {
		if s.next.Load() <= int64(now) {
			fired += s.fire(now)
		}
	}
	return fired
}

// Len returns the number of armed entries. It locks each shard in turn, so
// it is exact only when nothing arms or fires concurrently.
func (h *Heap) Len() int {
	n := 0
	for _, s := range h.shards {
		s.mu.Lock()
		n += len(s.h)
		s.mu.Unlock()
	}
	return n
}
