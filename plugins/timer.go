package plugins

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/plugins/internal/wire"
)

// TimerOptions configure a timer plugin's host side.
type TimerOptions struct {
	// Launch says how to start the plugin process; its Kind is set to
	// timer.
	Launch LaunchConfig
	// Restart is the policy after the process exits unexpectedly.
	Restart RestartPolicy
	// FireTimeout bounds how long a Fire waits for the plugin's answer
	// before it fires from the host's own table of armed entries (5 s by
	// default). It only matters for a plugin that hangs: a plugin that
	// exits ends the wait at once.
	FireTimeout time.Duration
	// FlushBytes is how many bytes of inserts and cancels may wait for the
	// next Fire before they are shipped on their own (16 KiB by default).
	FlushBytes int
}

func (o *TimerOptions) defaults() {
	o.Launch.Kind = wire.KindTimer
	if o.FireTimeout <= 0 {
		o.FireTimeout = 5 * time.Second
	}
	if o.FlushBytes <= 0 {
		o.FlushBytes = 16 << 10
	}
}

// TimerPlugin is one supervised timer plugin process serving any number of
// Timers, each its own session (a bidirectional gRPC stream). NewTimer
// starts a plugin for a single timer; StartTimerPlugin and
// (*TimerPlugin).NewTimer share one process between several.
//
// The supervisor watches the process through go-plugin's gRPC health
// service; when the process exits unexpectedly every Timer keeps working
// from the host's own table (see Timer) until the restarted process is
// attached again, which replays each Timer's armed entries to it.
type TimerPlugin struct {
	opts TimerOptions
	name string
	log  *slog.Logger
	sup  *supervisor

	mu          sync.Mutex
	proc        *process
	timers      map[*Timer]struct{}
	watchCancel context.CancelFunc
	broken      error // why proc is being restarted (see restart)
	closed      bool
}

// StartTimerPlugin starts the plugin process and supervises it.
func StartTimerPlugin(o TimerOptions) (*TimerPlugin, error) {
	o.defaults()
	log := o.Launch.Log
	if log == nil {
		log = slog.Default()
	}
	tp := &TimerPlugin{opts: o, name: o.Launch.name(), log: log, timers: map[*Timer]struct{}{}}
	tp.sup = newSupervisor(&tp.opts.Launch, o.Restart, log, tp.open)
	if err := tp.sup.start(); err != nil {
		return nil, err
	}
	timerPlugins.Lock()
	timerPlugins.m[tp] = struct{}{}
	timerPlugins.Unlock()
	return tp, nil
}

// timerPlugins are the open timer plugins of this process.
var timerPlugins = struct {
	sync.Mutex
	m map[*TimerPlugin]struct{}
}{m: map[*TimerPlugin]struct{}{}}

func liveTimerPlugins() []*TimerPlugin {
	timerPlugins.Lock()
	defer timerPlugins.Unlock()
	out := make([]*TimerPlugin, 0, len(timerPlugins.m))
	for tp := range timerPlugins.m {
		out = append(out, tp)
	}
	return out
}

// NewTimer starts a plugin process for one timer on clock; closing the
// timer ends the process.
func NewTimer(o TimerOptions, clock core.Clock) (*Timer, error) {
	tp, err := StartTimerPlugin(o)
	if err != nil {
		return nil, err
	}
	t, err := tp.NewTimer(clock)
	if err != nil {
		tp.Close()
		return nil, err
	}
	t.owns = true
	return t, nil
}

func (tp *TimerPlugin) err(cause error) error {
	return &Error{Plugin: tp.name, Path: tp.opts.Launch.Path, Err: cause}
}

// open is the supervisor's start function: it watches the fresh process's
// health stream, which ends when the process does, and attaches every
// Timer to it.
func (tp *TimerPlugin) open(p *process) (func() error, error) {
	ctx, cancel := context.WithCancel(context.Background())
	w, err := grpc_health_v1.NewHealthClient(p.conn).Watch(ctx, &grpc_health_v1.HealthCheckRequest{Service: plugin.GRPCServiceName})
	if err == nil {
		_, err = w.Recv()
	}
	if err != nil {
		cancel()
		return nil, tp.err(fmt.Errorf("watching the plugin's health: %w", err))
	}
	tp.mu.Lock()
	if tp.closed {
		tp.mu.Unlock()
		cancel()
		return nil, tp.err(errors.New("closed"))
	}
	tp.proc = p
	tp.watchCancel = cancel
	tp.broken = nil
	timers := make([]*Timer, 0, len(tp.timers))
	for t := range tp.timers {
		timers = append(timers, t)
	}
	tp.mu.Unlock()
	for _, t := range timers {
		if err := t.attach(p, false); err != nil {
			tp.log.Error("attaching a timer to the restarted plugin", "plugin", tp.name, "error", err)
		}
	}
	wait := func() error {
		for {
			if _, err := w.Recv(); err != nil {
				tp.mu.Lock()
				if tp.proc == p {
					tp.proc = nil
					if tp.broken != nil {
						err = tp.broken
					}
				}
				tp.mu.Unlock()
				cancel()
				return err
			}
		}
	}
	return wait, nil
}

// restart ends process p because a session on it broke the protocol (a
// frame one side could not parse): the supervisor's wait returns cause,
// and it starts a fresh process per the restart policy, to which every
// Timer is attached again. Meanwhile the timers fire from their tables.
func (tp *TimerPlugin) restart(p *process, cause error) {
	tp.mu.Lock()
	if tp.proc != p || tp.closed || tp.broken != nil {
		tp.mu.Unlock()
		return
	}
	tp.broken = cause
	cancel := tp.watchCancel
	tp.mu.Unlock()
	tp.log.Error("a timer session failed; restarting the plugin", "plugin", tp.name, "pid", p.pid, "error", cause)
	cancel()
}

// NewTimer opens a session for a new timer on clock: the plugin builds its
// timer on a mirror of clock. It waits for the plugin to answer, so a
// timer that cannot be built fails here.
func (tp *TimerPlugin) NewTimer(clock core.Clock) (*Timer, error) {
	if clock == nil {
		return nil, tp.err(errors.New("a timer needs a clock"))
	}
	tp.mu.Lock()
	if tp.closed {
		tp.mu.Unlock()
		return nil, tp.err(errors.New("the timer plugin is closed"))
	}
	p := tp.proc
	t := &Timer{
		tp:     tp,
		clock:  clock,
		armed:  map[uint64]*core.TimerEntry{},
		cached: math.MaxInt64,
		hello:  make(chan struct{}),
	}
	tp.timers[t] = struct{}{}
	tp.mu.Unlock()
	if p == nil {
		tp.forget(t)
		return nil, tp.err(ErrPluginUnavailable)
	}
	if err := t.attach(p, true); err != nil {
		tp.forget(t)
		t.Close()
		return nil, err
	}
	return t, nil
}

func (tp *TimerPlugin) forget(t *Timer) {
	tp.mu.Lock()
	delete(tp.timers, t)
	tp.mu.Unlock()
}

// Name returns the plugin's name.
func (tp *TimerPlugin) Name() string { return tp.name }

// Restarts reports how many times the process was restarted.
func (tp *TimerPlugin) Restarts() int { return tp.sup.restarts() }

// Running reports whether a process serves the plugin now.
func (tp *TimerPlugin) Running() bool {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return tp.proc != nil
}

// KillProcess kills the plugin process at once (SIGKILL), as a crash
// would. The restart policy applies.
func (tp *TimerPlugin) KillProcess() error {
	tp.mu.Lock()
	p := tp.proc
	tp.mu.Unlock()
	if p == nil {
		return tp.err(ErrPluginUnavailable)
	}
	proc, err := findProcess(p.pid)
	if err != nil {
		return err
	}
	return proc.Kill()
}

// Close closes every Timer of the plugin and ends the process gracefully,
// waiting for it to exit.
func (tp *TimerPlugin) Close() error {
	tp.mu.Lock()
	if tp.closed {
		tp.mu.Unlock()
		return nil
	}
	tp.closed = true
	timerPlugins.Lock()
	delete(timerPlugins.m, tp)
	timerPlugins.Unlock()
	timers := make([]*Timer, 0, len(tp.timers))
	for t := range tp.timers {
		timers = append(timers, t)
	}
	cancel := tp.watchCancel
	tp.mu.Unlock()
	tp.sup.stop()
	for _, t := range timers {
		t.closeSession()
	}
	if cancel != nil {
		cancel() // the supervisor's wait returns and it ends the process
	}
	tp.sup.wait()
	return nil
}

// Timer is a core.Timer whose entries are kept by a timer plugin.
//
// # Protocol
//
// The host keeps the authoritative table of armed entries (a fresh id per
// arming) and the plugin keeps them in its timer structure. Insert, Reset
// and Cancel update the table and append records to the session's
// outgoing frame without waiting: they are shipped in a batch with the
// next Fire that needs the plugin, or once FlushBytes accumulated. Cancel
// and Len answer from the table.
//
// The host's clock is the only clock. The plugin builds its timer on a
// mirror clock that the host moves forward: the session starts with the
// host's current instant, and every Fire request carries the instant to
// fire at. Nothing in the plugin measures time.
//
// The host caches a lower bound of the earliest armed deadline: the
// plugin's NextDeadline as of its latest answer, lowered by every deadline
// armed since that answer's request. NextDeadline returns it without a
// call, so parking costs nothing, and Fire at an instant before it returns
// at once. A Fire at or after it sends a Fire record and waits for the
// answer: the ids the plugin expired, which the host marks fired and
// whose wakers it wakes on the calling goroutine, and the plugin's new
// NextDeadline. Cancels do not raise the bound, so after a cancel it may
// be early; the next Fire then costs a round trip that fires nothing and
// corrects it.
//
// # Failure
//
// While no process serves the timer (after a crash, before the restart;
// after the restart policy gave up; after Close), Fire fires due entries
// from the host's table at their exact deadlines (no rounding), so the
// runtime keeps its timers. A restarted process receives every armed
// entry again. A Fire whose answer does not come within FireTimeout falls
// back the same way; a late answer's entries that are still armed fire
// then.
type Timer struct {
	tp    *TimerPlugin
	owns  bool // Close closes tp
	clock core.Clock
	hello chan struct{} // closed when the first session answered

	mu        sync.Mutex
	armed     map[uint64]*core.TimerEntry
	nextID    uint64
	st        *stream  // the session; nil while none
	sp        *process // the process st runs on
	res       time.Duration
	cached    core.Instant // lower bound of the earliest armed deadline
	seq       uint64
	waits     []*fireWait // Fire requests awaiting their answer, in order
	closed    bool
	helloOnce sync.Once

	calls, local atomic.Uint64
}

// fireWait is a Fire waiting for the plugin's answer.
type fireWait struct {
	seq uint64
	st  *stream
	// after is the earliest deadline armed since the request was
	// queued: the plugin's answer does not reflect those.
	after core.Instant
	ch    chan fireResult // capacity 1
}

type fireResult struct {
	n      int
	wakers []core.Waker
	ok     bool // false: the session ended first
}

var _ core.Timer = (*Timer)(nil)

// TimerStats are a plugin timer's counters.
type TimerStats struct {
	// Calls counts Fires that asked the plugin (round trips); Local counts
	// Fires served from the host's table while the plugin was away.
	Calls, Local uint64
}

// Stats returns the timer's counters.
func (t *Timer) Stats() TimerStats { return TimerStats{Calls: t.calls.Load(), Local: t.local.Load()} }

// Plugin returns the plugin serving the timer.
func (t *Timer) Plugin() *TimerPlugin { return t.tp }

// Resolution returns the resolution the plugin's timer reported (0 if it
// reported none): deadlines are rounded up to it while a process serves
// the timer.
func (t *Timer) Resolution() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.res
}

// attach opens a session on p and replays the armed entries; first waits
// for the plugin's hello.
func (t *Timer) attach(p *process, first bool) error {
	st, err := openStream(p, wire.TimerServiceName, t.onFrame, t.onEnd)
	if err != nil {
		return t.tp.err(fmt.Errorf("opening the timer session: %w", err))
	}
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		st.abort()
		<-st.done
		return t.tp.err(errors.New("the timer is closed"))
	}
	old := t.st
	t.st, t.sp = st, p
	// The first records of a session: the host's now, then every armed
	// entry. Records appended later follow them.
	now := t.clock.Now()
	t.cached = math.MaxInt64
	st.append(func(e *wire.Enc) {
		e.U8(wire.TimerSync)
		e.Int(int64(now))
		for id, en := range t.armed {
			e.U8(wire.TimerInsert)
			e.Uint(id)
			e.Int(int64(en.Deadline))
			t.cached = min(t.cached, en.Deadline)
		}
	})
	t.mu.Unlock()
	if old != nil {
		old.abort()
	}
	st.flush()
	if !first {
		return nil
	}
	timeout := time.NewTimer(t.tp.opts.Launch.startTimeout())
	defer timeout.Stop()
	select {
	case <-t.hello:
		return nil
	case <-st.done:
		return t.tp.err(fmt.Errorf("%w: the timer session ended before the plugin built its timer: %v", ErrPluginExited, st.err))
	case <-timeout.C:
		return t.tp.err(errors.New("the plugin did not build its timer in time"))
	}
}

// onFrame applies the plugin's answers. Each reply is decoded whole
// before it is applied, so a malformed one changes nothing: the session
// ends with the error (see onEnd) and the entries stay armed in the
// host's table.
func (t *Timer) onFrame(st *stream, frame []byte) error {
	d := wire.NewDec(frame)
	var ids []uint64
	for d.More() {
		switch code := d.U8(); code {
		case wire.TimerHello:
			res := time.Duration(d.UintMax("a timer resolution in nanoseconds", math.MaxInt64))
			if d.Err() != nil {
				break
			}
			t.mu.Lock()
			t.res = res
			t.mu.Unlock()
			t.helloOnce.Do(func() { close(t.hello) })
		case wire.TimerFired:
			seq := d.Uint()
			n := d.Count("fired timer ids", math.MaxInt)
			ids = ids[:0]
			for range n {
				ids = append(ids, d.Uint())
			}
			has, next := d.Bool(), core.Instant(d.Int())
			if d.Err() != nil {
				break
			}
			t.applyFired(st, seq, ids, has, next)
		default:
			d.Failf("unknown timer reply %d", code)
		}
	}
	if d.Err() != nil {
		return protocolError(d.Err())
	}
	return nil
}

// applyFired applies a TimerFired reply: it expires the entries still
// armed and hands their wakers to the Fire waiting for the reply, or
// wakes them here if that Fire gave up.
func (t *Timer) applyFired(st *stream, seq uint64, ids []uint64, has bool, next core.Instant) {
	r := fireResult{ok: true}
	t.mu.Lock()
	if t.st == st {
		for _, id := range ids {
			if e := t.armed[id]; e != nil {
				t.disarmLocked(e, id, false)
				r.n++
				if w := spi.Expire(e); w != nil {
					r.wakers = append(r.wakers, w)
				}
			}
		}
	}
	var w *fireWait
	if len(t.waits) > 0 && t.waits[0].seq == seq && t.waits[0].st == st {
		w = t.waits[0]
		t.waits = t.waits[1:]
	}
	if w != nil && t.st == st {
		// The answer reflects every record sent before the request;
		// entries armed since are in w.after.
		c := w.after
		if has {
			c = min(c, next)
		}
		t.cached = c
	}
	if len(t.armed) == 0 {
		t.cached = math.MaxInt64
	}
	t.mu.Unlock()
	if w != nil {
		w.ch <- r
	} else {
		// Its Fire gave up waiting: wake here.
		for _, wk := range r.wakers {
			wk.Wake()
		}
	}
}

// onEnd detaches an ended session and fails its waiting Fires. A
// session that failed on a frame one side could not parse restarts the
// process (see TimerPlugin.restart).
func (t *Timer) onEnd(st *stream, err error) {
	t.mu.Lock()
	closed := t.closed
	var p *process
	if t.st == st {
		t.st, p = nil, t.sp
		t.sp = nil
	}
	var failed []*fireWait
	t.waits = slices.DeleteFunc(t.waits, func(w *fireWait) bool {
		if w.st == st {
			failed = append(failed, w)
			return true
		}
		return false
	})
	t.mu.Unlock()
	for _, w := range failed {
		w.ch <- fireResult{}
	}
	if p != nil && !closed && (errors.Is(err, errProtocol) || wire.Rejected(err)) {
		t.tp.restart(p, t.tp.err(err))
	}
	if !closed {
		t.tp.log.Debug("timer session ended", "plugin", t.tp.name, "error", err)
	}
}

// armLocked arms e under a fresh id.
func (t *Timer) armLocked(e *core.TimerEntry) {
	t.nextID++
	id := t.nextID
	t.armed[id] = e
	spi.LinksOf(e).Owner = t
	spi.LinksOf(e).Index = int(id)
	spi.ResetFired(e)
	d := e.Deadline
	t.cached = min(t.cached, d)
	for _, w := range t.waits {
		w.after = min(w.after, d)
	}
	if t.st != nil {
		n := t.st.append(func(enc *wire.Enc) {
			enc.U8(wire.TimerInsert)
			enc.Uint(id)
			enc.Int(int64(d))
		})
		if n >= t.tp.opts.FlushBytes {
			t.st.flush()
		}
	}
}

// disarmLocked removes e (armed as id) from the table; tell asks the
// plugin to cancel it too.
func (t *Timer) disarmLocked(e *core.TimerEntry, id uint64, tell bool) {
	delete(t.armed, id)
	spi.LinksOf(e).Owner = nil
	if tell && t.st != nil {
		n := t.st.append(func(enc *wire.Enc) {
			enc.U8(wire.TimerCancel)
			enc.Uint(id)
		})
		if n >= t.tp.opts.FlushBytes {
			t.st.flush()
		}
	}
}

// armedHere reports whether e is armed in t (with the lock held).
func (t *Timer) armedHere(e *core.TimerEntry) bool {
	return spi.LinksOf(e).Owner == any(t)
}

// Insert arms e at e.Deadline; an entry already armed here is moved.
func (t *Timer) Insert(e *core.TimerEntry) {
	t.mu.Lock()
	if t.armedHere(e) {
		t.disarmLocked(e, uint64(spi.LinksOf(e).Index), true)
	}
	t.armLocked(e)
	t.mu.Unlock()
}

// Reset moves e to deadline, arming it again if it fired or was cancelled.
func (t *Timer) Reset(e *core.TimerEntry, deadline core.Instant) {
	t.mu.Lock()
	if t.armedHere(e) {
		t.disarmLocked(e, uint64(spi.LinksOf(e).Index), true)
	}
	e.Deadline = deadline
	t.armLocked(e)
	t.mu.Unlock()
}

// Cancel disarms e and reports whether it was armed. It answers from the
// host's table; the plugin learns of it with the next batch.
func (t *Timer) Cancel(e *core.TimerEntry) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.armedHere(e) {
		return false
	}
	t.disarmLocked(e, uint64(spi.LinksOf(e).Index), true)
	return true
}

// NextDeadline returns the cached lower bound of the earliest armed
// deadline, without a call to the plugin.
func (t *Timer) NextDeadline() (core.Instant, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.armed) == 0 {
		return 0, false
	}
	return t.cached, true
}

// Len returns the number of armed entries.
func (t *Timer) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.armed)
}

// Fire fires every entry due at now. Before the cached next deadline it
// returns at once; otherwise it asks the plugin (see Timer) and wakes the
// expired entries' wakers on the calling goroutine.
func (t *Timer) Fire(now core.Instant) int {
	t.mu.Lock()
	if len(t.armed) == 0 || now < t.cached {
		t.mu.Unlock()
		return 0
	}
	st := t.st
	if st == nil {
		r := t.fireLocalLocked(now)
		t.mu.Unlock()
		return r.wake()
	}
	t.seq++
	w := &fireWait{seq: t.seq, st: st, after: math.MaxInt64, ch: make(chan fireResult, 1)}
	t.waits = append(t.waits, w)
	st.append(func(e *wire.Enc) {
		e.U8(wire.TimerFire)
		e.Uint(w.seq)
		e.Int(int64(now))
	})
	t.mu.Unlock()
	st.flush()
	t.calls.Add(1)
	timeout := time.NewTimer(t.tp.opts.FireTimeout)
	var r fireResult
	select {
	case r = <-w.ch:
		timeout.Stop()
	case <-timeout.C:
		t.mu.Lock()
		if i := slices.Index(t.waits, w); i >= 0 {
			t.waits = slices.Delete(t.waits, i, i+1)
			t.tp.log.Warn("the timer plugin did not answer in time; firing from the host's table", "plugin", t.tp.name, "timeout", t.tp.opts.FireTimeout)
			r = t.fireLocalLocked(now)
			r.ok = true
			t.mu.Unlock()
		} else {
			// The answer came meanwhile.
			t.mu.Unlock()
			r = <-w.ch
		}
	}
	if !r.ok {
		// The session ended: fire from the table.
		t.mu.Lock()
		r = t.fireLocalLocked(now)
		t.mu.Unlock()
	}
	return r.wake()
}

// fireLocalLocked fires the entries due at now from the host's table and
// recomputes the cached deadline.
func (t *Timer) fireLocalLocked(now core.Instant) fireResult {
	t.local.Add(1)
	var r fireResult
	next := core.Instant(math.MaxInt64)
	for id, e := range t.armed {
		if e.Deadline > now {
			next = min(next, e.Deadline)
			continue
		}
		t.disarmLocked(e, id, true)
		r.n++
		if w := spi.Expire(e); w != nil {
			r.wakers = append(r.wakers, w)
		}
	}
	t.cached = next
	return r
}

func (r fireResult) wake() int {
	for _, w := range r.wakers {
		w.Wake()
	}
	return r.n
}

// closeSession ends the timer's session, waiting for the plugin to end it.
func (t *Timer) closeSession() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.closed = true
	st := t.st
	t.mu.Unlock()
	if st == nil {
		return
	}
	st.closeSend()
	select {
	case <-st.done:
	case <-time.After(5 * time.Second):
		st.abort()
		<-st.done
	}
}

// Close ends the timer's session; a timer made by NewTimer also ends its
// plugin process. Entries still armed keep firing from the host's table.
// It implements io.Closer, through which a runtime that owns the timer
// closes it.
func (t *Timer) Close() error {
	t.closeSession()
	t.tp.forget(t)
	if t.owns {
		return t.tp.Close()
	}
	return nil
}

// startTimeout is StartTimeout or its default.
func (c *LaunchConfig) startTimeout() time.Duration {
	if c.StartTimeout > 0 {
		return c.StartTimeout
	}
	return 30 * time.Second
}
