package workstealing_test

import (
	"sync"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// testTimerName is the timer module the tests register: the scheduler
// module must not import a sibling timer module, so its tests bring the
// smallest correct core.Timer of their own, a binary heap under a mutex.
const testTimerName = "workstealing-test-heap"

func init() {
	core.RegisterTimer(testTimerName, "a binary-heap timer for the workstealing tests", nil,
		func(struct{}, core.TimerParams) (*heapTimer, error) { return &heapTimer{}, nil })
}

type heapTimer struct {
	mu sync.Mutex
	h  []*core.TimerEntry
}

func (t *heapTimer) less(i, j int) bool { return t.h[i].Deadline < t.h[j].Deadline }

func (t *heapTimer) swap(i, j int) {
	t.h[i], t.h[j] = t.h[j], t.h[i]
	spi.LinksOf(t.h[i]).Index, spi.LinksOf(t.h[j]).Index = i, j
}

func (t *heapTimer) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !t.less(i, p) {
			return
		}
		t.swap(i, p)
		i = p
	}
}

func (t *heapTimer) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(t.h) {
			return
		}
		m := l
		if r := l + 1; r < len(t.h) && t.less(r, l) {
			m = r
		}
		if !t.less(m, i) {
			return
		}
		t.swap(i, m)
		i = m
	}
}

func (t *heapTimer) remove(i int) {
	last := len(t.h) - 1
	e := t.h[i]
	if i != last {
		t.swap(i, last)
	}
	t.h[last] = nil
	t.h = t.h[:last]
	if i != last {
		t.down(i)
		t.up(i)
	}
	spi.LinksOf(e).Owner = nil
	spi.LinksOf(e).Index = -1
}

// arm adds e or moves it; called with mu held.
func (t *heapTimer) arm(e *core.TimerEntry) {
	if e.Fired() {
		spi.ResetFired(e)
	}
	if spi.LinksOf(e).Owner == any(t) {
		t.down(spi.LinksOf(e).Index)
		t.up(spi.LinksOf(e).Index)
		return
	}
	spi.LinksOf(e).Owner = t
	spi.LinksOf(e).Index = len(t.h)
	t.h = append(t.h, e)
	t.up(spi.LinksOf(e).Index)
}

func (t *heapTimer) Insert(e *core.TimerEntry) {
	t.mu.Lock()
	t.arm(e)
	t.mu.Unlock()
}

func (t *heapTimer) Reset(e *core.TimerEntry, deadline core.Instant) {
	t.mu.Lock()
	e.Deadline = deadline
	t.arm(e)
	t.mu.Unlock()
}

func (t *heapTimer) Cancel(e *core.TimerEntry) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if spi.LinksOf(e).Owner != any(t) {
		return false
	}
	t.remove(spi.LinksOf(e).Index)
	return true
}

func (t *heapTimer) NextDeadline() (core.Instant, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.h) == 0 {
		return 0, false
	}
	return t.h[0].Deadline, true
}

func (t *heapTimer) Fire(now core.Instant) int {
	var wake []core.Waker
	t.mu.Lock()
	for len(t.h) > 0 && t.h[0].Deadline <= now {
		e := t.h[0]
		t.remove(0)
		if w := spi.Expire(e); w != nil {
			wake = append(wake, w)
		}
	}
	t.mu.Unlock()
	for _, w := range wake {
		w.Wake()
	}
	return len(wake)
}

func (t *heapTimer) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.h)
}
