package wheel

import (
	"math/bits"
	"time"
	"unsafe"

	"github.com/weftrt/weft/core"
)

// MaxShards bounds the shard count a Wheel accepts.
const MaxShards = 1024

// Resolution is the wheel's tick: deadlines are rounded up to a multiple
// of it.
const Resolution = time.Millisecond

// Wheel is a sharded hierarchical timing wheel implementing [core.Timer].
// All methods may be called from any goroutine. An entry belongs to one
// Wheel at a time, and its owner does not call Insert, Reset or Cancel for
// it from two goroutines at once (Fire may run concurrently with any of
// them).
type Wheel struct {
	shards []*shard
	// shift turns an address hash into a shard index: 64 - log2(shards),
	// which is 64 (index always 0) for a single shard.
	shift uint
}

var _ core.Timer = (*Wheel)(nil)

// New returns a wheel on clock with the given number of shards, rounded up
// to a power of two and clamped to [1, MaxShards]. Its time starts at the
// clock's current instant.
func New(clock core.Clock, shards int) *Wheel {
	shards = max(1, min(shards, MaxShards))
	n := 1 << bits.Len(uint(shards-1))
	start := int64(0)
	if clock != nil {
		start = max(0, floorTick(clock.Now()))
	}
	w := &Wheel{shards: make([]*shard, n), shift: uint(64 - bits.Len(uint(n-1)))}
	for i := range w.shards {
		// One allocation per shard keeps each shard's lock and next word
		// away from its neighbours' cache lines.
		w.shards[i] = newShard(start)
	}
	return w
}

// ShardsFor returns the default shard count for a runtime with the given
// number of workers: one for a single worker, otherwise sixteen per worker
// (see "Sharding" in the package documentation).
func ShardsFor(workers int) int {
	if workers <= 1 {
		return 1
	}
	return min(16*workers, MaxShards)
}

// Shards returns the number of shards.
func (w *Wheel) Shards() int { return len(w.shards) }

// Resolution returns [Resolution]. The timer conformance suite uses it to
// know how much later than its deadline an entry may fire.
func (w *Wheel) Resolution() time.Duration { return Resolution }

// shardOf maps e to its shard: a Fibonacci hash of the 8 KiB page holding
// e (see "Sharding" in the package documentation).
func (w *Wheel) shardOf(e *core.TimerEntry) *shard {
	page := uint64(uintptr(unsafe.Pointer(e)) >> pageShift)
	return w.shards[(page*0x9E3779B97F4A7C15)>>w.shift]
}

// pageShift is log2 of the Go allocator's page size. Small objects that one
// P allocates in a row come from the same span of pages, so hashing the page
// rather than the object keeps a worker's entries on one shard.
const pageShift = 13

// Insert arms e at e.Deadline, rounded up to the next millisecond. An entry
// already armed in this wheel is moved, as by Reset. A deadline that has
// passed fires at the next Fire.
func (w *Wheel) Insert(e *core.TimerEntry) {
	s := w.shardOf(e)
	s.mu.Lock()
	s.arm(e)
	s.mu.Unlock()
}

// Reset moves e to deadline, arming it again if it fired or was cancelled.
func (w *Wheel) Reset(e *core.TimerEntry, deadline core.Instant) {
	s := w.shardOf(e)
	s.mu.Lock()
	// The location of an armed entry is in its link fields, not its
	// deadline, so the deadline may change before arm unfiles it.
	e.Deadline = deadline
	s.arm(e)
	s.mu.Unlock()
}

// Cancel disarms e and reports whether it was armed. After it returns e is
// not marked fired by this wheel; a wake taken by a Fire that won the race
// may still be delivered (see "Firing and wakers").
func (w *Wheel) Cancel(e *core.TimerEntry) bool {
	s := w.shardOf(e)
	s.mu.Lock()
	ok := s.cancel(e)
	s.mu.Unlock()
	return ok
}

// NextDeadline returns the next instant at which Fire has work: the start
// of the earliest busy slot, on a millisecond boundary. It is never later
// than the earliest armed deadline rounded up, and may be earlier when a
// slot must cascade first.
func (w *Wheel) NextDeadline() (core.Instant, bool) {
	next := int64(never)
	for _, s := range w.shards {
		next = min(next, s.next.Load())
	}
	if next == never {
		return 0, false
	}
	return tickInstant(next), true
}

// Fire fires every entry whose rounded deadline is at or before now and
// returns how many it fired. Shards with nothing due are skipped without
// taking their lock. Wakers run on the calling goroutine, outside every
// lock.
func (w *Wheel) Fire(now core.Instant) int {
	nowTick := floorTick(now)
	fired := 0
	for _, s := range w.shards {
		if s.next.Load() <= nowTick {
			fired += s.fire(nowTick)
		}
	}
	return fired
}

// Len returns the number of armed entries. It locks each shard in turn, so
// it is exact only when nothing arms or fires concurrently.
func (w *Wheel) Len() int {
	n := 0
	for _, s := range w.shards {
		s.mu.Lock()
		n += s.n
		s.mu.Unlock()
	}
	return n
}
