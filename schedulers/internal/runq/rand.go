package runq

// Rand chooses where a thief starts its scan of the other workers' run
// queues, so that searching workers spread over their victims: a
// xorshift64* generator, one per worker, used only by that worker's
// goroutine. The zero value must be seeded before use.
type Rand struct{ x uint64 }

// Seed starts the generator of worker number worker from seed (a clock
// reading, say); workers seeded with the same value still differ.
func (r *Rand) Seed(seed uint64, worker int) {
	r.x = (seed ^ uint64(worker+1)*0x9E3779B97F4A7C15) | 1
}

// N returns a pseudo-random number in [0, n).
func (r *Rand) N(n int) int {
	x := r.x
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	r.x = x
	return int(((x * 0x2545F4914F6CDD1D) >> 32) * uint64(n) >> 32)
}
