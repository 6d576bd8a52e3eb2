package conformance

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// TimerFactory builds the timer under test on a clock. The suite hands it
// a paused [core.VClock] with auto-advance off and moves that clock itself.
type TimerFactory func(clock core.Clock) core.Timer

// TimerResolution is an optional interface of a [core.Timer] that rounds
// deadlines up: Resolution is the granularity it rounds to. The suite then
// expects an entry to fire at the first Fire at or after its deadline
// rounded up to that granularity; a timer without the method must fire at
// the first Fire at or after the deadline itself.
type TimerResolution interface {
	Resolution() time.Duration
}

// timerBehaviour is one named behaviour of the timer suite.
type timerBehaviour struct {
	name string
	run  func(t *testing.T, f TimerFactory)
}

// TimerBehaviours returns the names of the behaviours Timer checks, in
// order.
func TimerBehaviours() []string {
	var names []string
	for _, b := range timerSuite {
		names = append(names, b.name)
	}
	return names
}

// Timer runs the timer conformance suite against timers built by f. Every
// behaviour is a subtest on a fresh timer and a fresh virtual clock, which
// the suite advances by hand and whose instants it passes to Fire; no
// verdict depends on real time.
func Timer(t *testing.T, f TimerFactory) {
	for _, b := range timerSuite {
		t.Run(b.name, func(t *testing.T) { b.run(t, f) })
	}
}

var timerSuite = []timerBehaviour{
	{"EntriesFireInDeadlineOrder", testTimerOrder},
	{"NothingFiresBeforeItsDeadline", testTimerNothingEarly},
	{"EachEntryFiresAtTheFirstFireAtItsRoundedDeadline", testTimerOnTime},
	{"AnEntryDueInThePastFiresAtTheNextFire", testTimerPastDeadline},
	{"FireCountsWhatItFiredAndLenCountsWhatIsArmed", testTimerCounts},
	{"NextDeadlineIsEmptyWhenNothingIsArmed", testTimerNextDeadlineEmpty},
	{"NextDeadlineIsNeverLaterThanTheEarliestDeadline", testTimerNextDeadlineBound},
	{"AdvancingToNextDeadlineReachesEveryDeadlineExactly", testTimerAutoAdvanceSteps},
	{"CancelBeforeFiringDisarmsTheEntry", testTimerCancelBefore},
	{"CancelAfterFiringReportsFalse", testTimerCancelAfter},
	{"CancelOfAnUnarmedEntryReportsFalse", testTimerCancelUnarmed},
	{"CancelRacingFireEitherCancelsOrFiresNeverBoth", testTimerCancelWhileFiring},
	{"AWakerMayCancelResetAndArmEntriesOfTheSameBatch", testTimerReentrantWaker},
	{"ResetMovesAnArmedEntryLater", testTimerResetLater},
	{"ResetMovesAnArmedEntryEarlier", testTimerResetEarlier},
	{"ResetArmsAFiredEntryAgain", testTimerResetFired},
	{"ResetArmsACancelledEntryAgain", testTimerResetCancelled},
	{"InsertOfAnArmedEntryMovesIt", testTimerInsertArmed},
	{"TenThousandEntriesWithTheSameDeadlineEachFireOnce", testTimerSameDeadline},
	{"TheLatestRegisteredWakerIsTheOneWoken", testTimerLatestWaker},
	{"FarDeadlinesFireOnTimeAcrossLongJumps", testTimerFarDeadlines},
	{"ArmingAfterALongIdleDoesNotFireEarly", testTimerAfterIdle},
	{"RandomArmCancelResetAndStepsAgreeWithAModel", testTimerModel},
	{"ConcurrentArmAndCancelFromEveryWorker", testTimerConcurrentArmCancel},
	{"ConcurrentFiresFireEachEntryExactlyOnce", testTimerConcurrentFire},
}

// timerHangLimit bounds a behaviour that would hang on a deadlocked timer.
const timerHangLimit = 30 * time.Second

// timerFixture is a timer on a paused virtual clock.
type timerFixture struct {
	clock *core.VClock
	tm    core.Timer
	res   time.Duration
}

func newTimerFixture(t *testing.T, f TimerFactory) *timerFixture {
	t.Helper()
	clock := core.NewVirtualClock()
	clock.SetAutoAdvance(false)
	tm := f(clock)
	require.NotNil(t, tm, "the factory returned a nil timer")
	res := time.Nanosecond
	if r, ok := tm.(TimerResolution); ok && r.Resolution() > 0 {
		res = r.Resolution()
	}
	return &timerFixture{clock: clock, tm: tm, res: res}
}

// rounded is the instant at which the timer must fire d: d rounded up to
// the timer's resolution.
func (fx *timerFixture) rounded(d core.Instant) core.Instant {
	r := core.Instant(fx.res)
	if d <= 0 || r <= 1 {
		return d
	}
	q := d / r
	if d%r != 0 {
		if q >= math.MaxInt64/r {
			return math.MaxInt64
		}
		q++
	}
	return q * r
}

// fireAt moves the clock to i and fires.
func (fx *timerFixture) fireAt(i core.Instant) int {
	fx.clock.AdvanceTo(i)
	return fx.tm.Fire(fx.clock.Now())
}

// timerWakeCount is a waker that counts its wakes.
type timerWakeCount struct{ n atomic.Int64 }

// Wake counts a wake.
func (w *timerWakeCount) Wake() { w.n.Add(1) }

// timerLog records which entries' wakers were woken, in order.
type timerLog struct {
	mu  sync.Mutex
	ids []int
}

// timerLogWaker appends its id to a timerLog when woken.
type timerLogWaker struct {
	log *timerLog
	id  int
}

// Wake records the waker's id.
func (w *timerLogWaker) Wake() {
	w.log.mu.Lock()
	w.log.ids = append(w.log.ids, w.id)
	w.log.mu.Unlock()
}

// take returns and clears the recorded ids.
func (l *timerLog) take() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := l.ids
	l.ids = nil
	return ids
}

// timerEntries makes n entries with the given deadlines and log wakers.
func timerEntries(log *timerLog, deadlines []core.Instant) []*core.TimerEntry {
	es := make([]*core.TimerEntry, len(deadlines))
	for i, d := range deadlines {
		e := &core.TimerEntry{Deadline: d}
		e.Waker.Register(&timerLogWaker{log: log, id: i})
		es[i] = e
	}
	return es
}

// timerRandomDeadlines returns n deadlines in (from, from+span], at
// nanosecond precision.
func timerRandomDeadlines(rng *rand.Rand, n int, from core.Instant, span time.Duration) []core.Instant {
	ds := make([]core.Instant, n)
	for i := range ds {
		ds[i] = from + 1 + core.Instant(rng.Int64N(int64(span)))
	}
	return ds
}

// timerWithin fails the test if f does not return within timerHangLimit:
// a deadlocked timer fails instead of hanging the run.
func timerWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(timerHangLimit):
		t.Fatalf("%s did not finish within %v: the timer deadlocked", what, timerHangLimit)
	}
}

func testTimerOrder(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	rng := rand.New(rand.NewPCG(1, 2))
	log := &timerLog{}
	ds := timerRandomDeadlines(rng, 2000, 0, 2*time.Second)
	es := timerEntries(log, ds)
	for _, e := range es {
		fx.tm.Insert(e)
	}
	// Step the clock in random strides; every entry fired by one Fire must
	// be later than every entry fired by an earlier one.
	var prevMax core.Instant = -1
	fired := 0
	for now := core.Instant(0); fired < len(es); {
		now += core.Instant(rng.Int64N(int64(3 * time.Millisecond)))
		fx.fireAt(now)
		batch := log.take()
		var bmin, bmax core.Instant = math.MaxInt64, -1
		for _, id := range batch {
			bmin, bmax = min(bmin, ds[id]), max(bmax, ds[id])
		}
		if len(batch) > 0 {
			require.Greater(t, bmin, prevMax,
				"an entry due at %v fired after one due at %v", prevMax, bmin)
			prevMax = bmax
		}
		fired += len(batch)
		require.Less(t, now, core.Instant(time.Hour), "entries did not all fire")
	}
	assert.Zero(t, fx.tm.Len())
}

func testTimerNothingEarly(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	rng := rand.New(rand.NewPCG(3, 4))
	log := &timerLog{}
	ds := timerRandomDeadlines(rng, 500, 0, 500*time.Millisecond)
	es := timerEntries(log, ds)
	for _, e := range es {
		fx.tm.Insert(e)
	}
	// Fire one nanosecond before each deadline, in order: the entry due
	// then must not fire.
	sorted := slices.Clone(ds)
	slices.Sort(sorted)
	for _, d := range sorted {
		fx.fireAt(d - 1)
		for _, id := range log.take() {
			require.LessOrEqual(t, ds[id], fx.clock.Now(),
				"entry due at %v fired at %v", ds[id], fx.clock.Now())
			require.True(t, es[id].Fired())
		}
	}
}

func testTimerOnTime(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	rng := rand.New(rand.NewPCG(5, 6))
	log := &timerLog{}
	ds := timerRandomDeadlines(rng, 3000, 0, 10*time.Second)
	es := timerEntries(log, ds)
	for _, e := range es {
		fx.tm.Insert(e)
	}
	// With the clock moving in random strides, each entry fires at the
	// first Fire whose instant reached its rounded deadline: that instant
	// is at or after it, and the previous Fire's instant was before it.
	var prev core.Instant
	for fired := 0; fired < len(es); {
		now := prev + core.Instant(rng.Int64N(int64(5*time.Millisecond))+1)
		fx.fireAt(now)
		for _, id := range log.take() {
			want := fx.rounded(ds[id])
			require.True(t, want > prev && want <= now,
				"entry %d due at %v (rounded %v) fired at the Fire of %v; the previous Fire was at %v",
				id, ds[id], want, now, prev)
			fired++
		}
		prev = now
		require.Less(t, now, core.Instant(time.Hour), "entries did not all fire")
	}
	assert.Zero(t, fx.tm.Len())
}

func testTimerPastDeadline(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	fx.fireAt(core.Instant(10 * time.Second))
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(3 * time.Second)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	next, ok := fx.tm.NextDeadline()
	require.True(t, ok, "an armed past entry must be reported by NextDeadline")
	assert.LessOrEqual(t, next, fx.clock.Now(), "a past entry makes the park timeout zero")
	assert.Equal(t, 1, fx.tm.Fire(fx.clock.Now()))
	assert.True(t, e.Fired())
	assert.Equal(t, int64(1), w.n.Load())

	// Before the epoch, too.
	e2 := &core.TimerEntry{Deadline: -5}
	e2.Waker.Register(w)
	fx.tm.Insert(e2)
	assert.Equal(t, 1, fx.tm.Fire(fx.clock.Now()))
	assert.Equal(t, int64(2), w.n.Load())
}

func testTimerCounts(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	log := &timerLog{}
	ds := make([]core.Instant, 100)
	for i := range ds {
		ds[i] = core.Instant(time.Duration(i+1) * time.Millisecond)
	}
	es := timerEntries(log, ds)
	for _, e := range es {
		fx.tm.Insert(e)
	}
	assert.Equal(t, 100, fx.tm.Len())
	assert.Equal(t, 10, fx.fireAt(core.Instant(10*time.Millisecond)))
	assert.Equal(t, 90, fx.tm.Len())
	assert.True(t, fx.tm.Cancel(es[50]))
	assert.Equal(t, 89, fx.tm.Len())
	assert.Equal(t, 0, fx.tm.Fire(fx.clock.Now()), "a second Fire at the same instant fires nothing")
	assert.Equal(t, 89, fx.fireAt(core.Instant(time.Second)))
	assert.Zero(t, fx.tm.Len())
	assert.Len(t, log.take(), 99)
}

func testTimerNextDeadlineEmpty(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	_, ok := fx.tm.NextDeadline()
	assert.False(t, ok, "a new timer has no deadline")
	e := &core.TimerEntry{Deadline: core.Instant(5 * time.Second)}
	fx.tm.Insert(e)
	_, ok = fx.tm.NextDeadline()
	assert.True(t, ok)
	fx.tm.Cancel(e)
	_, ok = fx.tm.NextDeadline()
	assert.False(t, ok, "no deadline once the only entry is cancelled")
	fx.tm.Insert(e)
	fx.fireAt(core.Instant(5 * time.Second))
	_, ok = fx.tm.NextDeadline()
	assert.False(t, ok, "no deadline once the only entry fired")
}

func testTimerNextDeadlineBound(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	rng := rand.New(rand.NewPCG(7, 8))
	es := make([]*core.TimerEntry, 0, 200)
	for range 200 {
		d := core.Instant(rng.Int64N(int64(48 * time.Hour)))
		e := &core.TimerEntry{Deadline: d}
		fx.tm.Insert(e)
		es = append(es, e)
		earliest := core.Instant(math.MaxInt64)
		for _, x := range es {
			earliest = min(earliest, fx.rounded(x.Deadline))
		}
		next, ok := fx.tm.NextDeadline()
		require.True(t, ok)
		require.LessOrEqual(t, next, earliest, "NextDeadline is later than an armed deadline")
	}
}

func testTimerAutoAdvanceSteps(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	rng := rand.New(rand.NewPCG(9, 10))
	log := &timerLog{}
	// Deadlines from microseconds to days, the spread an auto-advancing
	// clock must cross.
	ds := make([]core.Instant, 400)
	for i := range ds {
		span := []time.Duration{time.Millisecond, time.Second, time.Minute, time.Hour, 72 * time.Hour}[i%5]
		ds[i] = 1 + core.Instant(rng.Int64N(int64(span)))
	}
	es := timerEntries(log, ds)
	for _, e := range es {
		fx.tm.Insert(e)
	}
	steps, fired := 0, 0
	for {
		next, ok := fx.tm.NextDeadline()
		if !ok {
			break
		}
		require.Greater(t, next, fx.clock.Now()-1, "NextDeadline went backwards")
		fx.fireAt(next)
		for _, id := range log.take() {
			require.Equal(t, fx.rounded(ds[id]), fx.clock.Now(),
				"stepping to NextDeadline must reach entry %d's rounded deadline exactly", id)
			fired++
		}
		steps++
		require.Less(t, steps, 10*len(ds), "stepping to NextDeadline does not converge")
	}
	assert.Equal(t, len(es), fired)
}

func testTimerCancelBefore(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(100 * time.Millisecond)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	fx.fireAt(core.Instant(50 * time.Millisecond))
	assert.True(t, fx.tm.Cancel(e), "Cancel of an armed entry reports true")
	assert.False(t, fx.tm.Cancel(e), "a second Cancel reports false")
	assert.Zero(t, fx.tm.Len())
	fx.fireAt(core.Instant(time.Hour))
	assert.False(t, e.Fired())
	assert.Zero(t, w.n.Load(), "a cancelled entry's waker is never woken")
}

func testTimerCancelAfter(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(100 * time.Millisecond)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	fx.fireAt(core.Instant(200 * time.Millisecond))
	require.True(t, e.Fired())
	assert.False(t, fx.tm.Cancel(e), "Cancel after the entry fired reports false")
	assert.True(t, e.Fired(), "Cancel does not unmark a fired entry")
	assert.Equal(t, int64(1), w.n.Load())
}

func testTimerCancelUnarmed(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	e := &core.TimerEntry{Deadline: core.Instant(time.Second)}
	assert.False(t, fx.tm.Cancel(e), "an entry never inserted is not armed")
	assert.Zero(t, fx.tm.Len())
}

func testTimerCancelWhileFiring(t *testing.T, f TimerFactory) {
	const rounds, per = 200, 64
	for r := range rounds {
		fx := newTimerFixture(t, f)
		deadline := core.Instant(time.Duration(r+1) * time.Millisecond)
		es := make([]*core.TimerEntry, per)
		ws := make([]*timerWakeCount, per)
		for i := range es {
			ws[i] = &timerWakeCount{}
			es[i] = &core.TimerEntry{Deadline: deadline}
			es[i].Waker.Register(ws[i])
			fx.tm.Insert(es[i])
		}
		cancelled := make([]bool, per)
		var start, wg sync.WaitGroup
		start.Add(1)
		wg.Add(2)
		go func() {
			defer wg.Done()
			start.Wait()
			fx.fireAt(deadline)
		}()
		go func() {
			defer wg.Done()
			start.Wait()
			for i := per - 1; i >= 0; i-- {
				cancelled[i] = fx.tm.Cancel(es[i])
			}
		}()
		start.Done()
		timerWithin(t, "Fire racing Cancel", wg.Wait)
		for i := range es {
			if cancelled[i] {
				require.False(t, es[i].Fired(), "round %d entry %d: cancelled and fired", r, i)
				require.Zero(t, ws[i].n.Load(), "round %d entry %d: cancelled and woken", r, i)
			} else {
				require.True(t, es[i].Fired(), "round %d entry %d: neither cancelled nor fired", r, i)
				require.Equal(t, int64(1), ws[i].n.Load(), "round %d entry %d: fired but woken %d times", r, i, ws[i].n.Load())
			}
		}
		require.Zero(t, fx.tm.Len())
	}
}

func testTimerReentrantWaker(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	due := core.Instant(10 * time.Millisecond)
	var a, b, c, later core.TimerEntry
	var wa, wb, wc timerWakeCount
	a.Deadline, b.Deadline = due, due
	b.Waker.Register(&wb)
	c.Waker.Register(&wc)
	later.Deadline = core.Instant(time.Hour)
	fx.tm.Insert(&later)
	var cancelB bool
	a.Waker.Register(core.WakerFunc(func() {
		wa.Wake()
		// Re-enter the timer from inside a wake: cancel a peer due in the
		// same batch, arm a new entry, move another, re-arm itself.
		cancelB = fx.tm.Cancel(&b)
		c.Deadline = due + core.Instant(time.Millisecond)
		fx.tm.Insert(&c)
		fx.tm.Reset(&later, due+core.Instant(2*time.Millisecond))
		fx.tm.Reset(&a, due+core.Instant(3*time.Millisecond))
		_, _ = fx.tm.NextDeadline()
		_ = fx.tm.Len()
	}))
	fx.tm.Insert(&a)
	fx.tm.Insert(&b)
	timerWithin(t, "Fire with a re-entrant waker", func() { fx.fireAt(due) })
	require.Equal(t, int64(1), wa.n.Load())
	if cancelB {
		assert.Zero(t, wb.n.Load(), "b was cancelled by a's waker and must not be woken")
		assert.False(t, b.Fired())
	} else {
		assert.Equal(t, int64(1), wb.n.Load(), "b fired in a's batch and is woken once")
	}
	assert.False(t, a.Fired(), "a was re-armed by its own waker")
	timerWithin(t, "Fire after re-entrant arming", func() { fx.fireAt(due + core.Instant(3*time.Millisecond)) })
	assert.Equal(t, int64(1), wc.n.Load())
	assert.True(t, later.Fired())
	assert.True(t, a.Fired())
	assert.Zero(t, fx.tm.Len())
}

func testTimerResetLater(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(100 * time.Millisecond)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	fx.fireAt(core.Instant(40 * time.Millisecond))
	fx.tm.Reset(e, core.Instant(5*time.Second))
	assert.Equal(t, core.Instant(5*time.Second), e.Deadline)
	assert.Equal(t, 1, fx.tm.Len())
	fx.fireAt(core.Instant(5*time.Second) - 1)
	assert.False(t, e.Fired(), "the entry must not fire at its old deadline")
	fx.fireAt(fx.rounded(core.Instant(5 * time.Second)))
	assert.True(t, e.Fired())
	assert.Equal(t, int64(1), w.n.Load())
}

func testTimerResetEarlier(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(time.Hour)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	fx.fireAt(core.Instant(time.Second))
	fx.tm.Reset(e, core.Instant(1500*time.Millisecond))
	next, ok := fx.tm.NextDeadline()
	require.True(t, ok)
	assert.LessOrEqual(t, next, fx.rounded(core.Instant(1500*time.Millisecond)))
	fx.fireAt(core.Instant(1500 * time.Millisecond))
	assert.True(t, e.Fired())
	assert.Equal(t, int64(1), w.n.Load())
	assert.Zero(t, fx.tm.Len())
}

func testTimerResetFired(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(time.Millisecond)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	fx.fireAt(core.Instant(time.Millisecond))
	require.True(t, e.Fired())
	e.Waker.Register(w)
	fx.tm.Reset(e, core.Instant(20*time.Millisecond))
	assert.False(t, e.Fired(), "Reset clears the fired mark")
	assert.Equal(t, 1, fx.tm.Len())
	fx.fireAt(core.Instant(19 * time.Millisecond))
	assert.False(t, e.Fired())
	fx.fireAt(core.Instant(20 * time.Millisecond))
	assert.True(t, e.Fired())
	assert.Equal(t, int64(2), w.n.Load())
}

func testTimerResetCancelled(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(time.Millisecond)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	require.True(t, fx.tm.Cancel(e))
	fx.tm.Reset(e, core.Instant(7*time.Millisecond))
	assert.Equal(t, 1, fx.tm.Len())
	fx.fireAt(core.Instant(6 * time.Millisecond))
	assert.False(t, e.Fired())
	fx.fireAt(core.Instant(7 * time.Millisecond))
	assert.True(t, e.Fired())
	assert.Equal(t, int64(1), w.n.Load())
}

func testTimerInsertArmed(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(time.Second)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	e2 := &core.TimerEntry{Deadline: core.Instant(3 * time.Second)}
	fx.tm.Insert(e2)
	// Moving an armed entry with Insert is Reset by another name; the SPI
	// asks callers to use Reset, but a second Insert must not corrupt.
	e.Deadline = core.Instant(2 * time.Second)
	fx.tm.Insert(e)
	assert.Equal(t, 2, fx.tm.Len())
	fx.fireAt(core.Instant(1500 * time.Millisecond))
	assert.False(t, e.Fired())
	fx.fireAt(core.Instant(2 * time.Second))
	assert.True(t, e.Fired())
	assert.Equal(t, int64(1), w.n.Load())
	assert.Equal(t, 1, fx.tm.Len())
}

func testTimerSameDeadline(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	const n = 10000
	d := core.Instant(1234 * time.Millisecond)
	ws := make([]timerWakeCount, n)
	es := make([]core.TimerEntry, n)
	for i := range es {
		es[i].Deadline = d
		es[i].Waker.Register(&ws[i])
		fx.tm.Insert(&es[i])
	}
	assert.Equal(t, n, fx.tm.Len())
	assert.Zero(t, fx.fireAt(d-1))
	assert.Equal(t, n, fx.fireAt(fx.rounded(d)))
	for i := range ws {
		require.Equal(t, int64(1), ws[i].n.Load(), "entry %d", i)
		require.True(t, es[i].Fired())
	}
	assert.Zero(t, fx.tm.Len())
}

func testTimerLatestWaker(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	old, cur := &timerWakeCount{}, &timerWakeCount{}
	e := &core.TimerEntry{Deadline: core.Instant(time.Second)}
	e.Waker.Register(old)
	fx.tm.Insert(e)
	e.Waker.Register(cur)
	fx.fireAt(core.Instant(time.Second))
	assert.Zero(t, old.n.Load(), "a replaced waker is not woken")
	assert.Equal(t, int64(1), cur.n.Load())
}

func testTimerFarDeadlines(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	log := &timerLog{}
	ds := []core.Instant{
		core.Instant(time.Hour),
		core.Instant(13 * 24 * time.Hour),         // past level 4
		core.Instant(3 * 365 * 24 * time.Hour),    // past a wheel's 2^36 ms
		core.Instant(5*365*24*time.Hour + 123456), // past it twice, off-tick
		core.Instant(math.MaxInt64 - 1),           // the end of time
	}
	es := timerEntries(log, ds)
	for _, e := range es {
		fx.tm.Insert(e)
	}
	for id, d := range ds {
		if id == len(ds)-1 {
			break // nothing fires before the end of time
		}
		fx.fireAt(d - 1)
		assert.Empty(t, log.take(), "nothing is due one nanosecond before %v", d)
		fx.fireAt(fx.rounded(d))
		assert.Equal(t, []int{id}, log.take(), "the entry due at %v fires at it", d)
	}
	assert.Equal(t, 1, fx.tm.Len())
	next, ok := fx.tm.NextDeadline()
	require.True(t, ok)
	assert.LessOrEqual(t, next, fx.rounded(ds[len(ds)-1]))
}

func testTimerAfterIdle(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	// Time passes without a Fire (nothing armed): the timer's own notion of
	// time lags the clock.
	fx.clock.Advance(7*time.Hour + 3*time.Millisecond + 17)
	now := fx.clock.Now()
	w := &timerWakeCount{}
	e := &core.TimerEntry{Deadline: now + core.Instant(10*time.Millisecond)}
	e.Waker.Register(w)
	fx.tm.Insert(e)
	fx.tm.Fire(fx.clock.Now())
	assert.False(t, e.Fired(), "an entry armed after a long idle fired at once")
	fx.fireAt(e.Deadline - 1)
	assert.False(t, e.Fired(), "an entry armed after a long idle fired early")
	fx.fireAt(fx.rounded(e.Deadline))
	assert.True(t, e.Fired())
	assert.Equal(t, int64(1), w.n.Load())
}

// testTimerModel runs random operations against the timer and a trivial
// model (a map of armed deadlines) and checks after every Fire that the two
// agree on what fired.
func testTimerModel(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	rng := rand.New(rand.NewPCG(11, 12))
	const n = 3000
	log := &timerLog{}
	es := timerEntries(log, make([]core.Instant, n))
	armed := map[int]core.Instant{}
	for step := range 20000 {
		id := rng.IntN(n)
		e := es[id]
		now := fx.clock.Now()
		switch op := rng.IntN(10); {
		case op < 4: // arm or move
			d := now + core.Instant(rng.Int64N(int64([]time.Duration{time.Millisecond, 100 * time.Millisecond, 10 * time.Second, time.Hour}[rng.IntN(4)])))
			// A fired entry's waker was taken; register one on every arming.
			e.Waker.Register(&timerLogWaker{log: log, id: id})
			if _, ok := armed[id]; ok {
				fx.tm.Reset(e, d)
			} else {
				e.Deadline = d
				fx.tm.Insert(e)
			}
			armed[id] = d
		case op < 6:
			_, ok := armed[id]
			require.Equal(t, ok, fx.tm.Cancel(e), "step %d: Cancel of entry %d", step, id)
			delete(armed, id)
		case op < 9:
			fx.clock.Advance(time.Duration(rng.Int64N(int64(20 * time.Millisecond))))
			fallthrough
		default:
			if rng.IntN(50) == 0 {
				fx.clock.Advance(time.Duration(rng.Int64N(int64(2 * time.Hour))))
			}
			now = fx.clock.Now()
			got := fx.tm.Fire(now)
			ids := log.take()
			require.Equal(t, got, len(ids), "step %d: Fire's count", step)
			var want []int
			for id, d := range armed {
				if fx.rounded(d) <= now {
					want = append(want, id)
				}
			}
			require.ElementsMatch(t, want, ids, "step %d: at %v", step, now)
			for _, id := range ids {
				delete(armed, id)
			}
		}
		if step%1000 == 0 {
			require.Equal(t, len(armed), fx.tm.Len(), "step %d: Len", step)
		}
	}
}

// testTimerConcurrentArmCancel has one goroutine per worker (at least four)
// arm, move and cancel entries while another advances the clock and fires.
// Every arming uses its own waker, so the verdict is exact: an arming that
// a Cancel reported disarmed is never woken, and every other arming is
// woken exactly once by the end. (An arming moved by Reset may have fired
// just before the move, so a later successful Cancel allows one wake.)
func testTimerConcurrentArmCancel(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	workers := max(4, runtime.GOMAXPROCS(0))
	const perWorker, ops = 64, 3000
	type arming struct {
		w         *timerWakeCount
		cancelled bool
		// moved: Reset moved the arming; it may have fired (and been
		// woken) just before the move, which re-armed it without a waker.
		moved bool
	}
	history := make([][][]arming, workers)
	entries := make([][]*core.TimerEntry, workers)
	var stop atomic.Bool
	var wg, firer sync.WaitGroup
	firer.Add(1)
	go func() {
		defer firer.Done()
		for !stop.Load() {
			fx.clock.Advance(time.Millisecond)
			fx.tm.Fire(fx.clock.Now())
			runtime.Gosched()
		}
	}()
	for w := range workers {
		wg.Add(1)
		history[w] = make([][]arming, perWorker)
		entries[w] = make([]*core.TimerEntry, perWorker)
		for i := range entries[w] {
			entries[w][i] = &core.TimerEntry{}
		}
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 13))
			for range ops {
				i := rng.IntN(perWorker)
				e, h := entries[w][i], history[w][i]
				d := fx.clock.Now() + core.Instant(rng.Int64N(int64(30*time.Millisecond)))
				switch op := rng.IntN(4); op {
				case 0, 1: // a fresh arming with its own waker, by Insert or Reset
					if len(h) > 0 && !h[len(h)-1].cancelled && !e.Fired() {
						if fx.tm.Cancel(e) {
							h[len(h)-1].cancelled = true
						}
					}
					a := arming{w: &timerWakeCount{}}
					e.Waker.Register(a.w)
					if op == 0 {
						e.Deadline = d
						fx.tm.Insert(e)
					} else {
						fx.tm.Reset(e, d)
					}
					h = append(h, a)
				case 2: // move the live arming (if it fired meanwhile, its waker is spent)
					if len(h) > 0 && !h[len(h)-1].cancelled {
						h[len(h)-1].moved = true
						fx.tm.Reset(e, d)
					}
				case 3:
					if len(h) > 0 && fx.tm.Cancel(e) {
						h[len(h)-1].cancelled = true
					}
				}
				history[w][i] = h
			}
		}()
	}
	timerWithin(t, "concurrent arm and cancel", wg.Wait)
	stop.Store(true)
	firer.Wait()
	fx.fireAt(fx.clock.Now() + core.Instant(time.Hour))
	assert.Zero(t, fx.tm.Len(), "every arming fired or was cancelled")
	for w := range history {
		for i, h := range history[w] {
			for k, a := range h {
				switch {
				case a.cancelled && a.moved:
					require.LessOrEqual(t, a.w.n.Load(), int64(1), "worker %d entry %d arming %d: woken %d times", w, i, k, a.w.n.Load())
				case a.cancelled:
					require.Zero(t, a.w.n.Load(), "worker %d entry %d arming %d: cancelled yet woken", w, i, k)
				default:
					require.Equal(t, int64(1), a.w.n.Load(), "worker %d entry %d arming %d: woken %d times", w, i, k, a.w.n.Load())
				}
			}
		}
	}
}

func testTimerConcurrentFire(t *testing.T, f TimerFactory) {
	fx := newTimerFixture(t, f)
	const n = 20000
	rng := rand.New(rand.NewPCG(14, 15))
	ws := make([]timerWakeCount, n)
	es := make([]core.TimerEntry, n)
	for i := range es {
		es[i].Deadline = core.Instant(rng.Int64N(int64(200 * time.Millisecond)))
		es[i].Waker.Register(&ws[i])
		fx.tm.Insert(&es[i])
	}
	workers := max(4, runtime.GOMAXPROCS(0))
	var total atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 16))
			for fx.clock.Now() < core.Instant(300*time.Millisecond) {
				fx.clock.Advance(time.Duration(rng.Int64N(int64(time.Millisecond))))
				total.Add(int64(fx.tm.Fire(fx.clock.Now())))
			}
			total.Add(int64(fx.tm.Fire(fx.clock.Now())))
		}()
	}
	timerWithin(t, "concurrent Fire", wg.Wait)
	total.Add(int64(fx.fireAt(core.Instant(time.Second))))
	assert.Equal(t, int64(n), total.Load(), "the Fire counts add up to the entries")
	for i := range ws {
		require.Equal(t, int64(1), ws[i].n.Load(), "entry %d woken %d times", i, ws[i].n.Load())
	}
	assert.Zero(t, fx.tm.Len())
}
