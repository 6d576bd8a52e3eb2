package mpsc

// ring is the FIFO of buffered messages: a growable circular buffer whose
// size is a power of two. It is not synchronised; the channel's mutex
// guards it.
//
// It grows by doubling when full. A bounded channel never needs more than
// its capacity rounded up to a power of two, so its ring never shrinks. An
// unbounded channel's ring gives its buffer back when it drains to empty
// after a burst that grew it beyond shrinkAbove slots, so a burst does not
// pin memory for good while a steady flow never reallocates.
type ring[T any] struct {
	buf  []T
	head int // index of the oldest message
	n    int // number of messages
	// shrink lets the ring drop a large buffer once empty (unbounded).
	shrink bool
}

// shrinkAbove is the buffer size above which an empty unbounded ring
// releases its buffer.
const shrinkAbove = 1024

func (r *ring[T]) len() int { return r.n }

// push appends v.
func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *ring[T]) grow() {
	size := 2 * len(r.buf)
	if size == 0 {
		size = 4
	}
	buf := make([]T, size)
	// Copy the two runs in order, oldest first.
	k := copy(buf, r.buf[r.head:])
	copy(buf[k:], r.buf[:r.head])
	r.buf = buf
	r.head = 0
}

// pop removes and returns the oldest message.
func (r *ring[T]) pop() (T, bool) {
	var zero T
	if r.n == 0 {
		return zero, false
	}
	v := r.buf[r.head]
	r.buf[r.head] = zero // let the collector have it
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	if r.n == 0 {
		r.drained()
	}
	return v, true
}

// popInto appends up to limit messages to dst, oldest first, and returns
// the extended slice and how many it moved.
func (r *ring[T]) popInto(dst []T, limit int) ([]T, int) {
	k := min(limit, r.n)
	if k <= 0 {
		return dst, 0
	}
	var zero T
	mask := len(r.buf) - 1
	for i := 0; i < k; i++ {
		dst = append(dst, r.buf[r.head])
		r.buf[r.head] = zero
		r.head = (r.head + 1) & mask
	}
	r.n -= k
	if r.n == 0 {
		r.drained()
	}
	return dst, k
}

// drained is called when the ring becomes empty.
func (r *ring[T]) drained() {
	r.head = 0
	if r.shrink && len(r.buf) > shrinkAbove {
		r.buf = nil
	}
}
