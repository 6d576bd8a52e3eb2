package wheel

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

const (
	// numLevels and bitsPerLevel give 6 levels of 64 slots (see the package
	// documentation).
	numLevels     = 6
	bitsPerLevel  = 6
	slotsPerLevel = 1 << bitsPerLevel
	slotMask      = slotsPerLevel - 1

	// maxSpan is the number of ticks the levels cover exactly: 2^36 ms.
	maxSpan = int64(1) << (numLevels * bitsPerLevel)

	// tick is the wheel's resolution.
	tick = int64(time.Millisecond)

	// dueSlot marks, in TimerEntry.Slot, an entry on a shard's due or
	// firing list rather than in a level's slot.
	dueSlot = numLevels * slotsPerLevel

	// never is the next expiration of a shard with nothing armed.
	never = math.MaxInt64

	// wakeBatch is how many wakers Fire collects under a shard's lock
	// before releasing it to wake them.
	wakeBatch = 32
)

// level is one of a shard's six rings of 64 slots.
type level struct {
	// occupied has bit i set when slots[i] is not empty.
	occupied uint64
	// slots are the heads of circular lists of entries (head.Prev is the
	// tail), so filing at the tail keeps entries in arming order.
	slots [slotsPerLevel]*core.TimerEntry
}

// shard is one complete wheel behind one lock. The fields read without the
// lock come first; the slot heads follow.
type shard struct {
	mu sync.Mutex

	// next is the tick at which Fire must next look at this shard: the
	// start of its first busy slot, elapsed when its due list is not empty,
	// or never. Written under mu, read without it by Fire and
	// NextDeadline: each store under the lock pairs with their loads. A
	// Fire or NextDeadline racing an Insert may miss the new entry; the
	// goroutine that armed it sees it when it next asks for its park
	// timeout, so a deadline is never lost, only left to that worker.
	next atomic.Int64

	// elapsed is the tick up to which time has been processed; everything
	// due at or before it is on the due or firing list.
	elapsed int64
	// n counts armed entries (in slots, due or firing).
	n int
	// due holds entries whose tick has come and that await Fire; firing
	// holds the ones a Fire is expiring in batches. Both are circular
	// lists like the slots, marked by dueSlot.
	due, firing *core.TimerEntry

	levels [numLevels]level
}

func newShard(startTick int64) *shard {
	s := &shard{elapsed: startTick}
	s.next.Store(never)
	return s
}

// ceilTick rounds a deadline up to a whole tick: nothing fires early.
func ceilTick(d core.Instant) int64 {
	if d <= 0 {
		return 0
	}
	t := int64(d) / tick
	if int64(d)%tick != 0 {
		t++
	}
	return t
}

// floorTick rounds an instant down to a whole tick.
func floorTick(now core.Instant) int64 {
	if now < 0 {
		return -1
	}
	return int64(now) / tick
}

// tickInstant converts a tick back to an instant, saturating.
func tickInstant(t int64) core.Instant {
	if t > math.MaxInt64/tick {
		return math.MaxInt64
	}
	return core.Instant(t * tick)
}

// levelFor picks the level of an entry due at when, with time processed up
// to elapsed (see "Choosing a level").
func levelFor(elapsed, when int64) int {
	masked := (elapsed ^ when) | slotMask
	if masked >= maxSpan {
		return numLevels - 1
	}
	return (63 - bits.LeadingZeros64(uint64(masked))) / bitsPerLevel
}

// slotFor returns the slot of level lv that when falls in.
func slotFor(when int64, lv int) int {
	return int(when>>(lv*bitsPerLevel)) & slotMask
}

// expiration returns the tick at which slot of level lv must be processed,
// given time processed up to elapsed: the slot's start in the current
// rotation, or in the next one when that start has passed (only possible
// at the top level, for entries beyond the levels' range).
func expiration(elapsed int64, lv, slot int) int64 {
	slotRange := int64(1) << (lv * bitsPerLevel)
	levelRange := slotRange << bitsPerLevel
	start := elapsed&^(levelRange-1) + int64(slot)*slotRange
	if start <= elapsed {
		start += levelRange
	}
	return start
}

// nextSlot returns the level's busy slot that expires first, or -1. The
// search starts after elapsed's own slot and comes round to it last: below
// the top level that slot is always empty (its start has been processed),
// and at the top level an entry there lies a whole rotation or more ahead,
// so every other busy slot expires before it.
func (l *level) nextSlot(elapsed int64, lv int) int {
	if l.occupied == 0 {
		return -1
	}
	from := slotFor(elapsed, lv) + 1
	rotated := bits.RotateLeft64(l.occupied, -from)
	return (bits.TrailingZeros64(rotated) + from) & slotMask
}

// nextExpiration finds the earliest busy slot of the shard. Lower levels
// always expire before higher ones, so the first busy level wins.
func (s *shard) nextExpiration() (lv, slot int, when int64, ok bool) {
	for lv = 0; lv < numLevels; lv++ {
		if slot = s.levels[lv].nextSlot(s.elapsed, lv); slot >= 0 {
			return lv, slot, expiration(s.elapsed, lv, slot), true
		}
	}
	return 0, 0, 0, false
}

// recomputeNext publishes the shard's next expiration after a change that
// may have moved it later. Called with mu held.
func (s *shard) recomputeNext() {
	next := int64(never)
	if s.due != nil || s.firing != nil {
		next = s.elapsed
	} else if _, _, when, ok := s.nextExpiration(); ok {
		next = when
	}
	if s.next.Load() != next {
		s.next.Store(next)
	}
}

// file links e into the slot its deadline selects relative to elapsed, or
// onto the due list if its tick has come, and lowers next if needed. It
// leaves n and Owner alone. Called with mu held.
func (s *shard) file(e *core.TimerEntry) {
	when := ceilTick(e.Deadline)
	var exp int64
	if when <= s.elapsed {
		spi.LinksOf(e).Slot = dueSlot
		pushBack(&s.due, e)
		exp = s.elapsed
	} else {
		lv := levelFor(s.elapsed, when)
		slot := slotFor(when, lv)
		l := &s.levels[lv]
		spi.LinksOf(e).Slot = int32(lv*slotsPerLevel + slot)
		pushBack(&l.slots[slot], e)
		l.occupied |= 1 << slot
		exp = expiration(s.elapsed, lv, slot)
	}
	if exp < s.next.Load() {
		s.next.Store(exp)
	}
}

// unfile unlinks an armed e from wherever it is and republishes next if the
// removal emptied a list. Called with mu held.
func (s *shard) unfile(e *core.TimerEntry) {
	if spi.LinksOf(e).Slot == dueSlot {
		head := &s.due
		if s.firing == e {
			head = &s.firing
		}
		unlink(head, e)
		if s.due == nil && s.firing == nil {
			s.recomputeNext()
		}
		return
	}
	lv, slot := int(spi.LinksOf(e).Slot)/slotsPerLevel, int(spi.LinksOf(e).Slot)%slotsPerLevel
	l := &s.levels[lv]
	unlink(&l.slots[slot], e)
	if l.slots[slot] == nil {
		l.occupied &^= 1 << slot
		s.recomputeNext()
	}
}

// arm files e, unfiling it first if it is armed here already. Called with
// mu held.
func (s *shard) arm(e *core.TimerEntry) {
	if spi.LinksOf(e).Owner == any(s) {
		s.unfile(e)
	} else {
		spi.LinksOf(e).Owner = s
		s.n++
	}
	if e.Fired() {
		spi.ResetFired(e)
	}
	s.file(e)
}

// cancel disarms e if it is armed here. Called with mu held.
func (s *shard) cancel(e *core.TimerEntry) bool {
	if spi.LinksOf(e).Owner != any(s) {
		return false
	}
	s.unfile(e)
	spi.LinksOf(e).Owner = nil
	s.n--
	return true
}

// advance processes every slot whose expiration is at or before nowTick,
// cascading its entries to lower levels or onto the due list, then sets
// elapsed to nowTick. Called with mu held.
func (s *shard) advance(nowTick int64) {
	for {
		lv, slot, when, ok := s.nextExpiration()
		if !ok || when > nowTick {
			break
		}
		l := &s.levels[lv]
		head := l.slots[slot]
		l.slots[slot] = nil
		l.occupied &^= 1 << slot
		s.elapsed = when
		// Take the whole list first, then file each entry again relative
		// to the slot's start: an entry may land in this very slot.
		spi.LinksOf(spi.LinksOf(head).Prev).Next = nil
		for e := head; e != nil; {
			nx := spi.LinksOf(e).Next
			spi.LinksOf(e).Next, spi.LinksOf(e).Prev = nil, nil
			s.file(e)
			e = nx
		}
	}
	if nowTick > s.elapsed {
		s.elapsed = nowTick
	}
}

// fire expires everything due at nowTick and returns how many entries it
// fired. It takes and releases mu itself, waking each batch of wakers with
// the lock released.
func (s *shard) fire(nowTick int64) int {
	var batch [wakeBatch]core.Waker
	fired := 0
	s.mu.Lock()
	s.advance(nowTick)
	// Entries filed on the due list from here on (by a waker re-arming in
	// the past, say) wait for the next Fire, so this loop ends.
	concat(&s.firing, s.due)
	s.due = nil
	for {
		nb := 0
		for nb < wakeBatch && s.firing != nil {
			e := popFront(&s.firing)
			spi.LinksOf(e).Owner = nil
			s.n--
			fired++
			if w := spi.Expire(e); w != nil {
				batch[nb] = w
				nb++
			}
		}
		done := s.firing == nil
		if done {
			s.recomputeNext()
		}
		s.mu.Unlock()
		for i := range nb {
			batch[i].Wake()
			batch[i] = nil
		}
		if done {
			return fired
		}
		s.mu.Lock()
	}
}

// pushBack appends e to the circular list at *head.
func pushBack(head **core.TimerEntry, e *core.TimerEntry) {
	h := *head
	if h == nil {
		spi.LinksOf(e).Prev, spi.LinksOf(e).Next = e, e
		*head = e
		return
	}
	t := spi.LinksOf(h).Prev
	spi.LinksOf(e).Prev, spi.LinksOf(e).Next = t, h
	spi.LinksOf(t).Next = e
	spi.LinksOf(h).Prev = e
}

// unlink removes e from the circular list at *head.
func unlink(head **core.TimerEntry, e *core.TimerEntry) {
	if spi.LinksOf(e).Next == e {
		*head = nil
	} else {
		spi.LinksOf(spi.LinksOf(e).Prev).Next = spi.LinksOf(e).Next
		spi.LinksOf(spi.LinksOf(e).Next).Prev = spi.LinksOf(e).Prev
		if *head == e {
			*head = spi.LinksOf(e).Next
		}
	}
	spi.LinksOf(e).Prev, spi.LinksOf(e).Next = nil, nil
}

// popFront removes and returns the first entry of a non-empty list.
func popFront(head **core.TimerEntry) *core.TimerEntry {
	e := *head
	unlink(head, e)
	return e
}

// concat appends the circular list b to the circular list at *a.
func concat(a **core.TimerEntry, b *core.TimerEntry) {
	if b == nil {
		return
	}
	h := *a
	if h == nil {
		*a = b
		return
	}
	at, bt := spi.LinksOf(h).Prev, spi.LinksOf(b).Prev
	spi.LinksOf(at).Next = b
	spi.LinksOf(b).Prev = at
	spi.LinksOf(bt).Next = h
	spi.LinksOf(h).Prev = bt
}
