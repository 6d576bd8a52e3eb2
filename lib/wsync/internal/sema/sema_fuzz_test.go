package sema

import (
	"sync"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// The two implementations of the batch semaphore, the lock-free Sema and
// the owner-locked Locked, are checked against one model here.

type semImpl interface {
	tryAcquire(n int64) error
	release(n int64)
	close()
	available() int64
	newWaiter(n int64) semWaiter
}

type semWaiter interface {
	poll(cx *core.Context) (bool, error)
	drop()
}

type lockFree struct{ s Sema }

func (l *lockFree) tryAcquire(n int64) error { return l.s.TryAcquire(n) }
func (l *lockFree) release(n int64)          { l.s.Release(n, nil) }
func (l *lockFree) close()                   { l.s.Close() }
func (l *lockFree) available() int64         { return l.s.Available() }
func (l *lockFree) newWaiter(n int64) semWaiter {
	w := &lfWaiter{}
	w.w.Reset(&l.s, n)
	return w
}

type lfWaiter struct{ w Waiter }

func (w *lfWaiter) poll(cx *core.Context) (bool, error) { return w.w.Poll(cx) }
func (w *lfWaiter) drop()                               { w.w.Drop() }

// ownerLocked wraps Locked with the mutex its owner would hold.
type ownerLocked struct {
	mu sync.Mutex
	s  Locked
}

func (l *ownerLocked) tryAcquire(n int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.TryAcquire(n)
}

func (l *ownerLocked) release(n int64) {
	var wl waitq.WakeList
	l.mu.Lock()
	for n > 0 {
		if n = l.s.Release(n, &wl); n == 0 {
			break
		}
		l.mu.Unlock()
		wl.WakeAll(nil)
		l.mu.Lock()
	}
	l.mu.Unlock()
	wl.WakeAll(nil)
}

func (l *ownerLocked) close() {
	var wl waitq.WakeList
	l.mu.Lock()
	for l.s.Close(&wl) {
		l.mu.Unlock()
		wl.WakeAll(nil)
		l.mu.Lock()
	}
	l.mu.Unlock()
	wl.WakeAll(nil)
}

func (l *ownerLocked) available() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.s.Available()
}

func (l *ownerLocked) newWaiter(n int64) semWaiter {
	w := &olWaiter{l: l}
	w.w.Reset(&l.s, n)
	return w
}

type olWaiter struct {
	l *ownerLocked
	w LockedWaiter
}

func (w *olWaiter) poll(cx *core.Context) (bool, error) {
	w.l.mu.Lock()
	defer w.l.mu.Unlock()
	return w.w.Poll(cx)
}

func (w *olWaiter) drop() {
	w.l.mu.Lock()
	got := w.w.Drop()
	w.l.mu.Unlock()
	if got > 0 {
		w.l.release(got)
	}
}

type countWaker struct{ n int }

func (c *countWaker) Wake() { c.n++ }

type modelWaiter struct {
	impl      semWaiter
	wk        *countWaker
	cx        *core.Context
	n         int64
	remaining int64
	queued    bool // in the model's queue
	granted   bool
	polled    bool
	over      bool // completed or dropped
}

type semModel struct {
	avail   int64
	closed  bool
	queue   []*modelWaiter
	woken   map[*modelWaiter]bool
	holding int64 // permits held by completed acquires
}

func (m *semModel) release(k int64) {
	for len(m.queue) > 0 && k > 0 {
		w := m.queue[0]
		if w.remaining > k {
			w.remaining -= k
			return
		}
		k -= w.remaining
		w.remaining = 0
		w.granted = true
		w.queued = false
		m.woken[w] = true
		m.queue = m.queue[1:]
	}
	m.avail += k
}

func (m *semModel) remove(w *modelWaiter) {
	for i, q := range m.queue {
		if q == w {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			w.queued = false
			return
		}
	}
}

func fuzzSemaphore(t *testing.T, impl semImpl, initial int64, ops []byte) {
	m := &semModel{avail: initial}
	var ws []*modelWaiter
	checkWakes := func() {
		t.Helper()
		for _, w := range ws {
			want := m.woken[w]
			if got := w.wk.n > 0; got != want {
				t.Fatalf("waiter of %d (granted %v) woken=%v, want %v", w.n, w.granted, got, want)
			}
			w.wk.n = 0
		}
	}
	for i := 0; i < len(ops); i++ {
		m.woken = map[*modelWaiter]bool{}
		arg := int64(1)
		if i+1 < len(ops) {
			arg = int64(ops[i+1]%5) + 1
		}
		switch ops[i] % 6 {
		case 0: // start an acquire and poll it
			i++
			w := &modelWaiter{wk: &countWaker{}, n: arg}
			w.cx = core.NewContext(w.wk)
			w.impl = impl.newWaiter(arg)
			ws = append(ws, w)
			ok, err := w.impl.poll(w.cx)
			w.polled = true
			switch {
			case m.closed:
				if !ok || err != ErrClosed {
					t.Fatalf("acquire on closed: %v %v", ok, err)
				}
				w.over = true
			case len(m.queue) == 0 && m.avail >= arg:
				if !ok || err != nil {
					t.Fatalf("acquire of %d with %d available: %v %v", arg, m.avail, ok, err)
				}
				m.avail -= arg
				m.holding += arg
				w.over = true
			default:
				if ok {
					t.Fatalf("acquire of %d completed with %d available and %d queued", arg, m.avail, len(m.queue))
				}
				w.remaining = arg - m.avail
				m.avail = 0
				w.queued = true
				m.queue = append(m.queue, w)
			}
		case 1: // poll a waiting acquire
			for _, w := range ws {
				if w.over {
					continue
				}
				ok, err := w.impl.poll(w.cx)
				switch {
				case w.granted:
					if !ok || err != nil {
						t.Fatalf("granted acquire: %v %v", ok, err)
					}
					m.holding += w.n
					w.over = true
				case m.closed:
					if !ok || err != ErrClosed {
						t.Fatalf("closed acquire: %v %v", ok, err)
					}
					m.avail += w.n - w.remaining
					w.over = true
				default:
					if ok {
						t.Fatalf("ungranted acquire completed")
					}
				}
				break
			}
		case 2: // drop the most recent live acquire
			for k := len(ws) - 1; k >= 0; k-- {
				w := ws[k]
				if w.over {
					continue
				}
				w.over = true
				w.impl.drop()
				switch {
				case w.granted:
					m.release(w.n)
				default:
					m.remove(w)
					if got := w.n - w.remaining; got > 0 {
						m.release(got)
					}
				}
				break
			}
		case 3: // release permits held by completed acquires
			i++
			k := min(arg, m.holding)
			if k == 0 {
				continue
			}
			m.holding -= k
			impl.release(k)
			m.release(k)
		case 4: // try-acquire
			i++
			err := impl.tryAcquire(arg)
			switch {
			case m.closed:
				if err != ErrClosed {
					t.Fatalf("try on closed: %v", err)
				}
			case len(m.queue) == 0 && m.avail >= arg:
				if err != nil {
					t.Fatalf("try of %d with %d: %v", arg, m.avail, err)
				}
				m.avail -= arg
				m.holding += arg
			default:
				if err != ErrNoPermits {
					t.Fatalf("try of %d with %d and %d queued: %v", arg, m.avail, len(m.queue), err)
				}
			}
		case 5: // close
			if m.closed {
				continue
			}
			impl.close()
			m.closed = true
			for _, w := range m.queue {
				m.woken[w] = true
				w.queued = false
			}
			m.queue = nil
		}
		checkWakes()
		if got := impl.available(); got != m.avail {
			t.Fatalf("available = %d, want %d", got, m.avail)
		}
	}
	// Wind down: drop every live acquire, release everything held, and
	// check every permit is back.
	for _, w := range ws {
		if !w.over {
			w.impl.drop()
		}
	}
	if m.holding > 0 {
		impl.release(m.holding)
	}
	if got := impl.available(); got != initial {
		t.Fatalf("%d permits after wind-down, want %d", got, initial)
	}
}

// FuzzSemaMatchesTheModel checks the lock-free semaphore.
func FuzzSemaMatchesTheModel(f *testing.F) {
	f.Add(uint8(3), []byte{0, 4, 0, 1, 3, 2, 1, 2, 5, 1})
	f.Add(uint8(1), []byte{0, 0, 0, 0, 2, 3, 0, 1, 1, 4, 0})
	f.Fuzz(func(t *testing.T, initial uint8, ops []byte) {
		s := &lockFree{}
		s.s.Init(int64(initial % 8))
		fuzzSemaphore(t, s, int64(initial%8), ops)
	})
}

// FuzzLockedMatchesTheModel checks the owner-locked semaphore.
func FuzzLockedMatchesTheModel(f *testing.F) {
	f.Add(uint8(3), []byte{0, 4, 0, 1, 3, 2, 1, 2, 5, 1})
	f.Add(uint8(1), []byte{0, 0, 0, 0, 2, 3, 0, 1, 1, 4, 0})
	f.Fuzz(func(t *testing.T, initial uint8, ops []byte) {
		s := &ownerLocked{}
		s.s.Init(int64(initial % 8))
		fuzzSemaphore(t, s, int64(initial%8), ops)
	})
}
