package future_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// probe is an instrumented future for checking the combinator contract. It
// is ready with its value once released (or on poll readyOnPoll), counts its
// polls and drops, and records every contract violation it sees: a poll after
// it returned ready or was dropped, a drop after it returned ready, a second
// drop and, in strict mode, a poll that no wake asked for. It may be released
// and woken from any goroutine.
type probe[T any] struct {
	name  string
	value T
	// readyOnPoll, when > 0, makes the probe ready on that poll.
	readyOnPoll int
	// strict makes every poll but the first require a wake since the
	// previous poll (JoinAll and TryJoinAll promise that). Use it only when
	// one goroutine both wakes and polls: with concurrent wakes the probe
	// cannot tell which poll a wake was meant for (a wake may land between
	// the combinator deciding to poll the child and the poll itself), and
	// tests check polls <= wakes+1 instead.
	strict bool
	// budgeted makes the probe act like a weft resource: each poll first
	// calls cx.Proceed and returns pending when the budget is spent.
	budgeted bool

	mu          sync.Mutex
	released    bool
	polls       int
	drops       int
	wokenSince  bool // a wake was issued since the last poll
	ready       bool
	dropped     bool
	waker       core.Waker
	violations  []string
	wakesIssued int
}

func newProbe[T any](name string, v T) *probe[T] { return &probe[T]{name: name, value: v} }

func (p *probe[T]) violate(format string, args ...any) {
	p.violations = append(p.violations, p.name+": "+fmt.Sprintf(format, args...))
}

// Poll implements core.Future.
func (p *probe[T]) Poll(cx *core.Context) (T, bool) {
	p.mu.Lock()
	if p.ready {
		p.violate("polled after it returned ready")
	}
	if p.dropped {
		p.violate("polled after it was dropped")
	}
	if p.strict && p.polls > 0 && !p.wokenSince {
		p.violate("polled on poll %d without having been woken", p.polls+1)
	}
	p.polls++
	p.wokenSince = false
	var zero T
	if p.budgeted && !cx.Proceed() {
		p.wokenSince = true // Proceed woke the waker
		p.mu.Unlock()
		return zero, false
	}
	if p.released || (p.readyOnPoll > 0 && p.polls >= p.readyOnPoll) {
		p.ready = true
		p.waker = nil
		p.mu.Unlock()
		return p.value, true
	}
	p.waker = cx.Waker()
	p.mu.Unlock()
	return zero, false
}

// Drop implements core.Dropper.
func (p *probe[T]) Drop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.drops++
	if p.ready {
		p.violate("dropped after it returned ready")
	}
	if p.drops > 1 {
		p.violate("dropped %d times", p.drops)
	}
	p.dropped = true
	p.waker = nil // a dropped resource never wakes
}

// Release makes the probe ready and wakes the waker of its last poll.
func (p *probe[T]) Release() {
	p.mu.Lock()
	p.released = true
	p.mu.Unlock()
	p.Nudge()
}

// Nudge wakes the waker of the probe's last poll without making it ready
// (a spurious wake, as a resource may issue). A probe that is ready, dropped
// or never polled has no waker and does nothing.
func (p *probe[T]) Nudge() {
	p.mu.Lock()
	w := p.waker
	if w == nil {
		p.mu.Unlock()
		return
	}
	p.wokenSince = true
	p.wakesIssued++
	p.mu.Unlock()
	w.Wake()
}

func (p *probe[T]) Polls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.polls
}

func (p *probe[T]) Drops() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.drops
}

func (p *probe[T]) WakesIssued() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wakesIssued
}

func (p *probe[T]) Violations() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.violations...)
}

type violator interface{ Violations() []string }

// requireNoViolations fails the test if any probe saw its contract broken.
func requireNoViolations[P violator](t testing.TB, probes ...P) {
	t.Helper()
	var all []string
	for _, p := range probes {
		all = append(all, p.Violations()...)
	}
	require.Empty(t, all, "contract violations")
}

func probes[T any](prefix string, values ...T) []*probe[T] {
	ps := make([]*probe[T], len(values))
	for i, v := range values {
		ps[i] = newProbe(fmt.Sprintf("%s%d", prefix, i), v)
	}
	return ps
}

func asFutures[T any](ps []*probe[T]) []core.Future[T] {
	fs := make([]core.Future[T], len(ps))
	for i, p := range ps {
		fs[i] = p
	}
	return fs
}

// countingWaker counts its wakes; tests use it as the parent waker.
type countingWaker struct{ n atomic.Int64 }

func (w *countingWaker) Wake()        { w.n.Add(1) }
func (w *countingWaker) Count() int64 { return w.n.Load() }

// fakeWorker makes a Context budget-constrained, as on a runtime worker.
type fakeWorker struct{}

func (fakeWorker) Scheduler() core.Scheduler { return nil }
func (fakeWorker) Defer(w core.Waker)        { w.Wake() }
func (fakeWorker) Driver() core.Driver       { return nil }
func (fakeWorker) Time() *core.Time          { return nil }

// budgetContext returns a Context waking w whose budget has units left, and
// a function that gives it units left again, as a scheduler resets the
// budget at each tick (with core.Budget units).
func budgetContext(w core.Waker, units int) (cx *core.Context, setBudget func(units int)) {
	wbase := spi.NewWorkerContext(fakeWorker{})
	base := wbase.Context()
	setBudget = func(units int) {
		wbase.ResetBudget()
		for range core.Budget - units {
			base.Proceed()
		}
	}
	setBudget(units)
	c := base.WithWaker(w)
	return &c, setBudget
}

// pollOnce polls f once with a Context waking w.
func pollOnce[T any](f core.Future[T], w core.Waker) (T, bool) {
	return f.Poll(core.NewContext(w))
}

// logFuture appends its name to a shared log on every poll and is never
// ready; it shows the order in which a combinator polls its children.
func logFuture(log *[]string, name string) core.Future[int] {
	return core.PollFunc[int](func(*core.Context) (int, bool) {
		*log = append(*log, name)
		return 0, false
	})
}
