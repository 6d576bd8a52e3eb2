// Package heap is weft's d-ary min-heap timer, registered as the timer
// module "heap". It implements [core.Timer] with full clock precision: an
// entry fires at the first Fire(now) with now >= its deadline, to the
// nanosecond, where the wheel rounds to milliseconds.
//
// # Structure
//
// Each shard keeps a slice of entries ordered as a d-ary min-heap on
// Deadline (d = 4 by default, configurable to 2, 4, 8 or 16). A node's
// children are at d*i+1 .. d*i+d. Arming appends and sifts up; cancelling
// swaps the last entry into the hole and sifts it whichever way it must go;
// firing pops the root. All are O(log n), with log base d: a wider node
// makes the tree shallower, so arming (sift up, one comparison per level)
// gets cheaper, while popping (sift down, d comparisons per level) gets
// dearer; 4 is the usual sweet spot for cache lines of 64 bytes.
//
// # The stored index
//
// Every move of an entry within the slice writes its position into the
// entry's Index field, so Cancel and Reset find an entry in O(1) and need
// no search. Owner marks which shard holds the entry; an entry that fired
// or was cancelled has a nil Owner.
//
// # Sharding
//
// As in the wheel, workers must not serialise on one lock: a Heap is a
// power-of-two number of shards, each a heap with its own mutex, and an
// entry's shard is a Fibonacci hash of the 8 KiB page holding the entry.
// The hash needs no stored state and is the same for every operation on
// the entry, so its link fields are only touched under that shard's lock;
// Go's collector does not move heap objects, so the page is stable. Go
// allocates small objects from spans cached per P, so the sleeps one
// worker creates in a row share a page and a shard (which stays in that
// core's cache), while two workers allocating at once meet on a shard with
// probability 1/S. The SPI does not tell the timer which worker calls it,
// and entries are armed from foreign goroutines and cancelled by tasks that
// migrated, which rules out heaps owned by workers without a lock of their
// own. The default is sixteen shards per worker (one for a single worker),
// for the reasons measured in the wheel's documentation.
// Each shard publishes its root's deadline in an atomic word: NextDeadline
// is one load per shard, and Fire locks only shards whose root is due.
//
// # Firing and wakers
//
// Fire pops due roots under the shard's lock, marking each fired and taking
// its waker ([core.TimerEntry.Expire]); every 32 entries, and at the end, it
// releases the lock and wakes that batch, because a waker may re-enter the
// timer. Cancel therefore either removes an entry before it fired (and
// reports true) or finds it fired (and reports false), never both. A wake
// already taken by a concurrent Fire may still be delivered after such a
// Cancel; to a task that is a spurious wake, which is harmless.
//
// # Memory
//
// A shard stores one pointer per armed entry in its slice (8 bytes, up to
// twice that while the slice has room to grow); the rest is the caller's
// [core.TimerEntry]. TestBytesPerArmedTimer measures it for 1,000,000
// timers.
package heap
