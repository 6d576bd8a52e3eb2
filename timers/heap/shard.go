package heap

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

const (
	// never is the published root deadline of an empty shard.
	never = math.MaxInt64

	// wakeBatch is how many wakers Fire collects under a shard's lock
	// before releasing it to wake them.
	wakeBatch = 32

	// shrinkAbove is the capacity above which a shard's slice is halved
	// once it is less than a quarter full, so a burst of timers does not
	// pin its peak memory for ever.
	shrinkAbove = 1024
)

// shard is one d-ary min-heap behind one lock.
type shard struct {
	mu sync.Mutex

	// next is the deadline of the root, or never. Written under mu after
	// every change of the root, read without it by Fire and NextDeadline:
	// each store under the lock pairs with their loads. A Fire or
	// NextDeadline racing an Insert may miss the new entry; the goroutine
	// that armed it sees it when it next asks for its park timeout.
	next atomic.Int64

	// log2d is log2 of the arity.
	log2d uint
	// h is the heap; h[i].Index == i for every i.
	h []*core.TimerEntry
}

func newShard(log2d uint) *shard {
	s := &shard{log2d: log2d}
	s.next.Store(never)
	return s
}

// publish stores the root's deadline in next if it changed. Called with mu
// held.
func (s *shard) publish() {
	next := int64(never)
	if len(s.h) > 0 {
		next = int64(s.h[0].Deadline)
	}
	if s.next.Load() != next {
		s.next.Store(next)
	}
}

// arm adds e, or moves it if it is armed here already. Called with mu
// held.
func (s *shard) arm(e *core.TimerEntry) {
	if e.Fired() {
		spi.ResetFired(e)
	}
	if spi.LinksOf(e).Owner == any(s) {
		s.fix(spi.LinksOf(e).Index)
	} else {
		spi.LinksOf(e).Owner = s
		spi.LinksOf(e).Index = len(s.h)
		s.h = append(s.h, e)
		s.up(spi.LinksOf(e).Index)
	}
	s.publish()
}

// cancel removes e if it is armed here. Called with mu held.
func (s *shard) cancel(e *core.TimerEntry) bool {
	if spi.LinksOf(e).Owner != any(s) {
		return false
	}
	s.remove(spi.LinksOf(e).Index)
	s.publish()
	return true
}

// remove takes the entry at i out of the heap and clears its Owner.
func (s *shard) remove(i int) *core.TimerEntry {
	e := s.h[i]
	last := len(s.h) - 1
	if i != last {
		m := s.h[last]
		s.h[i] = m
		spi.LinksOf(m).Index = i
	}
	s.h[last] = nil
	s.h = s.h[:last]
	if i != last {
		s.fix(i)
	}
	spi.LinksOf(e).Owner = nil
	spi.LinksOf(e).Index = -1
	if c := cap(s.h); c > shrinkAbove && len(s.h) < c/4 {
		s.h = append(make([]*core.TimerEntry, 0, c/2), s.h...)
	}
	return e
}

// fix restores the heap order around i after its deadline changed.
func (s *shard) fix(i int) {
	if !s.up(i) {
		s.down(i)
	}
}

// up moves the entry at i towards the root while it is earlier than its
// parent and reports whether it moved.
func (s *shard) up(i int) bool {
	h := s.h
	e := h[i]
	start := i
	for i > 0 {
		p := (i - 1) >> s.log2d
		if h[p].Deadline <= e.Deadline {
			break
		}
		h[i] = h[p]
		spi.LinksOf(h[i]).Index = i
		i = p
	}
	h[i] = e
	spi.LinksOf(e).Index = i
	return i != start
}

// down moves the entry at i away from the root while a child is earlier.
func (s *shard) down(i int) {
	h := s.h
	n := len(h)
	e := h[i]
	for {
		first := i<<s.log2d + 1
		if first >= n {
			break
		}
		last := min(first+1<<s.log2d, n)
		m := first
		for c := first + 1; c < last; c++ {
			if h[c].Deadline < h[m].Deadline {
				m = c
			}
		}
		if h[m].Deadline >= e.Deadline {
			break
		}
		h[i] = h[m]
		spi.LinksOf(h[i]).Index = i
		i = m
	}
	h[i] = e
	spi.LinksOf(e).Index = i
}

// fire pops every root due at now and returns how many entries it fired.
// It takes and releases mu itself and wakes each batch with the lock
// released. It fires at most as many entries as the shard held when it
// began, so a waker that re-arms in the past cannot keep it looping.
func (s *shard) fire(now core.Instant) int {
	var batch [wakeBatch]core.Waker
	fired := 0
	s.mu.Lock()
	limit := len(s.h)
	for {
		nb := 0
		for nb < wakeBatch && fired < limit && len(s.h) > 0 && s.h[0].Deadline <= now {
			e := s.remove(0)
			fired++
			if w := spi.Expire(e); w != nil {
				batch[nb] = w
				nb++
			}
		}
		s.publish()
		done := fired >= limit || len(s.h) == 0 || s.h[0].Deadline > now
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
