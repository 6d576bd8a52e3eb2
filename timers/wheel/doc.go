// Package wheel is weft's hierarchical timing wheel, registered as the timer
// module "wheel". It implements [core.Timer] with O(1) arm and cancel, 1 ms
// resolution and a range of 2^36 ms (about 2.2 years) per rotation of the
// top level; later deadlines are still handled, by re-filing (see Range).
//
// # Levels
//
// A wheel counts time in ticks of 1 ms since the clock's epoch and keeps
// six levels of 64 slots. A slot of level n spans 64^n ticks, so a level
// spans 64 times what a slot of it spans:
//
//	level  slot width   level range
//	  0       1 ms         64 ms
//	  1      64 ms        ~4.1 s
//	  2     ~4.1 s        ~4.4 min
//	  3     ~4.4 min      ~4.7 h
//	  4     ~4.7 h       ~12.4 days
//	  5    ~12.4 days     ~2.2 years
//
// Each slot holds a circular doubly linked list of entries, threaded through
// the entries' own Prev/Next fields, so arming allocates nothing. Each level
// keeps a 64-bit occupancy mask; finding the next busy slot is a rotate and
// a count of trailing zeros.
//
// # Choosing a level
//
// An entry due at tick `when` while the wheel has processed time up to
// `elapsed` goes to the level of the highest bit in which the two differ:
//
//	level = log2((elapsed XOR when) | 63) / 6      (5 if that is >= 2^36)
//	slot  = (when >> 6*level) & 63
//
// XOR rather than subtraction: the highest differing bit names the coarsest
// granularity at which the two instants fall in different slots, so within
// the chosen level `when` lies in a later slot of the same rotation as
// `elapsed`. The `| 63` keeps two instants in the same 64 ms block at level
// 0. A 100 ms timer armed at tick 0 therefore goes to level 1, slot 1.
//
// # Cascade
//
// The wheel's next expiration is the start of the first busy slot, found by
// scanning levels from 0 upwards; a higher level never expires before a
// lower one. When time reaches a slot of level n > 0, the whole slot is taken
// first and then every entry is filed again relative to the slot's start,
// which puts it at a lower level (or on the due list if its tick has come).
// Taking the list before re-filing matters: an entry beyond the top level's
// range can land in the slot being processed, and interleaving the two would
// never end. An entry therefore moves at most five times before it fires,
// and the work to reach any instant is proportional to the entries that
// cascade, not to the ticks that pass: hours of virtual time cost nothing
// when no timer is armed.
//
// # Rounding
//
// A deadline is rounded up to the next whole tick and time is rounded down:
// an entry with deadline d fires at the first Fire(now) with
// floor(now) >= ceil(d), so it never fires before d and at most 1 ms after
// it (plus however late Fire is called). [Wheel.NextDeadline] reports
// instants on tick boundaries; it may be a cascade point earlier than the
// earliest deadline, never later, so a scheduler parking until it wakes in
// time, and an auto-advancing virtual clock reaches the exact tick after at
// most five cascades.
//
// # Range
//
// Deadlines up to 2^36 ms after the wheel's processed time are filed
// exactly. A later deadline goes to the top level in the slot its bits
// select, possibly one that comes round before the deadline; when that slot
// is processed the entry is filed again, possibly in the top level once
// more, so it still fires at its own tick.
//
// # Sharding
//
// Workers must not serialise on one lock, so a Wheel is a power-of-two
// number of independent shards, each a complete six-level wheel with its
// own mutex, its own elapsed time and its own due list.
//
// An entry's shard is a Fibonacci hash of the 8 KiB page that holds the
// entry. That needs no stored state and gives the same shard to Insert,
// Reset and Cancel, so every access to an entry's link fields happens under
// one shard's lock. Go's collector does not move heap objects, and an entry
// handed to the timer has escaped to the heap, so the page is stable. Why
// the page and not the object: Go allocates small objects from a span of
// pages cached per P, so the sleeps a worker creates in a row sit on the
// same page and arm the same shard, whose lock and slot heads then stay in
// that core's cache, while two workers allocating at the same time use
// different spans and, with S shards, meet on a shard with probability
// 1/S. Hashing the object address spreads each worker's entries over every
// shard instead, and every operation then pulls cache lines from the other
// cores (on the W7b churn with two workers and 8 shards: 180 ns per
// operation, against 70 with the page hash).
//
// Why hashing and not a wheel per worker (Tokio's newer design): the
// [core.Timer] SPI does not say which worker calls it, entries are armed
// from foreign goroutines too, and a task that migrates would cancel on a
// wheel another worker owns; a per-worker wheel needs a lock or a message
// for that case anyway.
//
// The default is sixteen shards per worker, rounded up to a power of two
// (one shard for a single-threaded runtime, which also keeps its firing
// order reproducible). An arm-and-cancel touches two pages, the new sleep's
// and the old one's, and two workers slow each other down whenever they
// touch the same shard at once, both through the lock and through the
// cache lines it drags along; on the W7b churn with two workers, 8 shards
// ran no faster than one, while 32 doubled the throughput. Shards are
// cheap: 3 KiB each, and Fire skips, with one atomic load, every shard
// whose next expiration has not come; NextDeadline is one load per shard.
//
// # Firing and wakers
//
// Fire cascades due slots onto a shard's due list under its lock, then
// expires entries from that list in batches: each is unlinked, marked fired
// and its waker taken ([core.TimerEntry.Expire]) under the lock, and the
// batch is woken after the lock is released, because a waker may re-enter
// the timer (reset, re-arm or cancel). Cancel of an entry still on the due
// list removes it, so an entry is either cancelled or fired, never both.
// A wake already taken by a concurrent Fire may still arrive after a Cancel
// that returned false; to a task that is a spurious wake, which is harmless.
//
// # Memory
//
// The wheel stores nothing per entry beyond the entry's own link fields; a
// shard is a fixed 3 KiB of slot heads. The bytes per armed timer are the
// caller's [core.TimerEntry] (or the sleep future embedding it), measured by
// TestBytesPerArmedTimer.
package wheel
