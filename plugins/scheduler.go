package plugins

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/plugins/internal/wire"
	"github.com/weftrt/weft/plugins/policy"
)

// SchedulerOptions configure a plugin scheduler.
type SchedulerOptions struct {
	// Launch says how to start the policy plugin; its Kind is set to
	// scheduler.
	Launch LaunchConfig
	// Restart is the policy after the process exits unexpectedly.
	Restart RestartPolicy
	// DecisionTimeout bounds how long the scheduler waits for the policy's
	// answer when it has a choice to make (200 ms by default). A policy
	// that misses it is bypassed, FIFO order in its place, until it
	// has caught up with every batch sent.
	DecisionTimeout time.Duration
	// MaxDecision is the most task ids the policy returns per answer (256
	// by default, at most 65536).
	MaxDecision int
	// FlushEvents is how many events may accumulate while no decision is
	// needed before they are shipped anyway (256 by default).
	FlushEvents int
	// EventInterval is how many polls pass between polls of the driver and
	// timers while tasks keep the scheduler busy (61 by default).
	EventInterval int
}

func (o *SchedulerOptions) defaults() {
	o.Launch.Kind = wire.KindScheduler
	if o.DecisionTimeout <= 0 {
		o.DecisionTimeout = 200 * time.Millisecond
	}
	if o.MaxDecision <= 0 {
		o.MaxDecision = 256
	}
	o.MaxDecision = min(o.MaxDecision, wire.MaxDecision)
	if o.FlushEvents <= 0 {
		o.FlushEvents = 256
	}
	if o.EventInterval <= 0 {
		o.EventInterval = 61
	}
}

// Scheduler is a single-threaded core.Scheduler whose run order is decided
// by a scheduler policy plugin. Like the current-thread scheduler, every
// task runs on the goroutine inside BlockOn (one BlockOn caller holds the
// core at a time; the others wait for their root or for the core).
//
// # Protocol
//
// The host keeps the tasks; the policy sees ids. The scheduler records an
// event for each task that becomes runnable (Spawned, with the TaskInfo
// given to SpawnWith; Woken, with the priority again), that it takes out of
// its run queue to poll (Polled), and that finishes (Completed). Events
// travel in batches, each a request on the session's stream; the policy
// answers each request, in order, with the ids of the tasks to run next,
// first first (at most MaxDecision of them); the latest answer replaces
// the previous one.
//
// When it picks the next task, the scheduler asks for a fresh order only
// if a task became runnable since its last request, or if it ran out of
// the last order while tasks remain; and it waits for the answer only
// when there is a choice, that is when more than one task is runnable.
// Otherwise the events wait (at most FlushEvents of them, or until the
// scheduler parks) and travel with the next request. It then runs the
// first task of the order that is still runnable, or, when the order has
// none, the task that became runnable first (FIFO): runnable tasks the
// policy did not mention run after those it did.
//
// # Failure
//
// The scheduler never stops running tasks because of its policy. While no
// process serves it (a crash, before the restart), or while the policy is
// behind (it missed DecisionTimeout, until it answers the latest
// request), tasks run in FIFO order. A restarted policy first receives a
// Spawned event for every runnable task, in FIFO order, with its priority.
type Scheduler struct {
	opts   SchedulerOptions
	name   string
	log    *slog.Logger
	p      core.SchedulerParams
	tasks  *core.TaskSet
	driver core.Driver
	time   *core.Time
	worker *schedWorker
	sup    *supervisor

	// smu guards the session and the policy's latest answer.
	smu      sync.Mutex
	st       *stream
	fresh    bool // a new session the owner has not replayed to yet
	ans      []core.TaskID
	ansSeq   uint64
	answerCh chan struct{} // capacity 1: an answer arrived

	// mu guards inject and closed.
	mu        sync.Mutex
	inject    []injected
	closed    bool
	injectLen atomic.Int64
	isClosed  atomic.Bool

	core           chan struct{}
	shutdownCh     chan struct{}
	shutdown       sync.Once
	closeDrv       sync.Once
	ownerGoroutine atomic.Uint64
	parked         atomic.Bool
	unparkCh       chan struct{}
	timer          *time.Timer

	// Owned by the core holder.
	queued   map[core.TaskID]queuedTask // runnable tasks
	fifo     []queuedTask               // runnable tasks in FIFO order, and stale slots
	head     int
	qseq     uint64
	info     map[core.TaskID]TaskInfo // live tasks spawned with SpawnWith
	events   wire.Enc
	nEvents  int
	runnable bool // a task became runnable since the last request
	sentSeq  uint64
	order    []core.TaskID // the policy's latest order
	opos     int
	orderSeq uint64
	behind   bool // the policy missed a deadline and has not caught up
	deferred []core.Waker
	spare    []core.Waker
	tick     uint32
	wcx      spi.WorkerContext
	cx       *core.Context

	waited, decided, fifoPicks, requests atomic.Uint64
}

type queuedTask struct {
	t   *core.Task
	seq uint64
}

type injected struct {
	t       *core.Task
	spawned bool
	info    TaskInfo
}

// schedWorker is the core.Worker handed to tasks.
type schedWorker struct{ s *Scheduler }

func (w *schedWorker) Scheduler() core.Scheduler { return w.s }
func (w *schedWorker) Defer(wk core.Waker)       { w.s.deferred = append(w.s.deferred, wk) }
func (w *schedWorker) Driver() core.Driver       { return w.s.driver }
func (w *schedWorker) Time() *core.Time          { return w.s.time }

// Blocking implements core.BlockingWorker.
func (w *schedWorker) Blocking() core.BlockingSpawner { return w.s.p.Blocking }

// NewScheduler starts the policy plugin and builds a scheduler on it. It
// creates the runtime's driver, if it has one, and owns it from then on.
func NewScheduler(o SchedulerOptions, p core.SchedulerParams) (*Scheduler, error) {
	o.defaults()
	if p.Tasks == nil {
		return nil, errors.New("plugins: SchedulerParams.Tasks is nil")
	}
	log := o.Launch.Log
	if log == nil {
		log = p.Log
	}
	if log == nil {
		log = slog.Default()
	}
	o.Launch.Log = log
	s := &Scheduler{
		opts:       o,
		name:       o.Launch.name(),
		log:        log,
		p:          p,
		tasks:      p.Tasks,
		time:       p.Time,
		answerCh:   make(chan struct{}, 1),
		core:       make(chan struct{}, 1),
		shutdownCh: make(chan struct{}),
		unparkCh:   make(chan struct{}, 1),
		queued:     map[core.TaskID]queuedTask{},
		info:       map[core.TaskID]TaskInfo{},
	}
	s.sup = newSupervisor(&s.opts.Launch, o.Restart, log, s.open)
	if err := s.sup.start(); err != nil {
		return nil, err
	}
	if p.NewDriver != nil {
		d, err := p.NewDriver()
		if err != nil {
			s.stopPlugin()
			return nil, fmt.Errorf("plugins: scheduler creating driver: %w", err)
		}
		s.driver = d
	}
	s.worker = &schedWorker{s: s}
	spi.SetUnpark(s.time, s.unpark)
	s.wcx = spi.NewWorkerContext(s.worker)
	s.cx = s.wcx.Context()
	s.core <- struct{}{}
	if s.driver == nil {
		s.timer = time.NewTimer(time.Hour)
		s.timer.Stop()
	}
	return s, nil
}

func (s *Scheduler) err(cause error) error {
	return &Error{Plugin: s.name, Path: s.opts.Launch.Path, Err: cause}
}

// open is the supervisor's start function: a session on a fresh process.
func (s *Scheduler) open(p *process) (func() error, error) {
	st, err := openStream(p, wire.SchedulerServiceName, s.onFrame, s.onEnd)
	if err != nil {
		return nil, s.err(fmt.Errorf("opening the scheduler session: %w", err))
	}
	s.smu.Lock()
	s.st = st
	s.fresh = true
	s.smu.Unlock()
	return func() error {
		<-st.done
		return st.err
	}, nil
}

// onFrame records the policy's answers; the owner adopts the latest. A
// frame is decoded whole before any answer in it is taken.
func (s *Scheduler) onFrame(st *stream, frame []byte) error {
	d := wire.NewDec(frame)
	type answer struct {
		seq uint64
		ids []core.TaskID
	}
	var answers []answer
	for d.More() {
		seq := d.Uint()
		n := d.Count("task ids in an answer", s.opts.MaxDecision)
		ids := make([]core.TaskID, n)
		for i := range ids {
			ids[i] = core.TaskID(d.Uint())
		}
		answers = append(answers, answer{seq, ids})
	}
	if d.Err() != nil {
		return protocolError(d.Err())
	}
	s.smu.Lock()
	for _, a := range answers {
		if s.st == st && a.seq > s.ansSeq {
			s.ans, s.ansSeq = a.ids, a.seq
		}
	}
	s.smu.Unlock()
	select {
	case s.answerCh <- struct{}{}:
	default:
	}
	return nil
}

func (s *Scheduler) onEnd(st *stream, err error) {
	s.smu.Lock()
	if s.st == st {
		s.st = nil
	}
	s.smu.Unlock()
	select {
	case s.answerCh <- struct{}{}:
	default:
	}
}

// Spawn binds t and queues it, with the TaskInfo SpawnWith attached.
func (s *Scheduler) Spawn(t *core.Task, from core.Worker) error {
	spi.Bind(t, s)
	if err := s.tasks.Bind(t); err != nil {
		return err
	}
	info, _ := takeSpawnInfo(t)
	s.enqueue(t, from, true, info)
	return nil
}

// Schedule queues a notified task: directly when called by the core
// holder, through the global queue otherwise (unparking the holder).
func (s *Scheduler) Schedule(t *core.Task, from core.Worker) {
	s.enqueue(t, from, false, TaskInfo{})
}

func (s *Scheduler) enqueue(t *core.Task, from core.Worker, spawned bool, info TaskInfo) {
	if from == core.Worker(s.worker) {
		if s.isClosed.Load() {
			spi.Shutdown(t)
			return
		}
		s.push(t, spawned, info)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		spi.Shutdown(t)
		return
	}
	s.inject = append(s.inject, injected{t: t, spawned: spawned, info: info})
	s.injectLen.Store(int64(len(s.inject)))
	s.mu.Unlock()
	if s.parked.Load() {
		s.unpark()
	}
}

// push makes t runnable and records the event (owner only).
func (s *Scheduler) push(t *core.Task, spawned bool, info TaskInfo) {
	id := t.ID()
	s.qseq++
	q := queuedTask{t: t, seq: s.qseq}
	s.queued[id] = q
	s.fifo = append(s.fifo, q)
	s.runnable = true
	if spawned {
		if info != (TaskInfo{}) {
			s.info[id] = info
		}
		s.event(policy.Spawned, id, info.Priority, info.Name)
	} else {
		s.event(policy.Woken, id, s.info[id].Priority, "")
	}
}

// event appends one event to the pending batch.
func (s *Scheduler) event(k policy.Kind, id core.TaskID, prio int, name string) {
	e := &s.events
	e.U8(byte(k))
	e.Uint(uint64(id))
	switch k {
	case policy.Spawned:
		e.Int(int64(prio))
		e.String(name)
	case policy.Woken:
		e.Int(int64(prio))
	}
	s.nEvents++
}

func (s *Scheduler) unpark() {
	if s.driver != nil {
		s.driver.Unpark()
		return
	}
	select {
	case s.unparkCh <- struct{}{}:
	default:
	}
}

// BlockOn runs tasks on the calling goroutine until done is closed or the
// scheduler shuts down; see core.Scheduler.
func (s *Scheduler) BlockOn(root *core.Task, done <-chan struct{}) {
	select {
	case <-done:
		return
	case <-s.shutdownCh:
		return
	case <-s.core:
		if s.isClosed.Load() {
			s.core <- struct{}{}
			return
		}
		s.ownerGoroutine.Store(spi.GoroutineID())
		s.run(done)
		s.ownerGoroutine.Store(0)
		if s.isClosed.Load() {
			s.closeDriver()
		}
		s.core <- struct{}{}
	}
}

func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func (s *Scheduler) run(done <-chan struct{}) {
	s.p.Hooks.RunAfterStart()
	defer s.p.Hooks.RunBeforeStop()
	for !s.isClosed.Load() && !isDone(done) {
		s.tick++
		if s.tick%uint32(s.opts.EventInterval) == 0 {
			s.parkFor(0)
		}
		t := s.next()
		if t == nil {
			if len(s.deferred) > 0 {
				s.parkFor(0)
				continue
			}
			s.parkIdle(done)
			continue
		}
		s.wcx.ResetBudget()
		if spi.Run(t, s.cx) {
			s.push(t, false, TaskInfo{})
		} else if t.IsComplete() {
			s.event(policy.Completed, t.ID(), 0, "")
			delete(s.info, t.ID())
		}
	}
}

// drainInject moves the global queue to the run queue, in arrival order.
func (s *Scheduler) drainInject() {
	if s.injectLen.Load() == 0 {
		return
	}
	s.mu.Lock()
	batch := s.inject
	s.inject = nil
	s.injectLen.Store(0)
	s.mu.Unlock()
	for _, in := range batch {
		s.push(in.t, in.spawned, in.info)
	}
}

// next picks the next task to run, or nil (owner only).
func (s *Scheduler) next() *core.Task {
	s.drainInject()
	if len(s.queued) == 0 {
		return nil
	}
	s.decide()
	for s.opos < len(s.order) {
		id := s.order[s.opos]
		s.opos++
		if q, ok := s.queued[id]; ok {
			s.decided.Add(1)
			return s.take(q)
		}
	}
	for s.head < len(s.fifo) {
		q := s.fifo[s.head]
		s.fifo[s.head] = queuedTask{}
		s.head++
		if cur, ok := s.queued[q.t.ID()]; ok && cur.seq == q.seq {
			s.fifoPicks.Add(1)
			return s.take(q)
		}
	}
	panic("plugins: scheduler run queue lost a task")
}

// take removes q from the run queue and records its Polled event.
func (s *Scheduler) take(q queuedTask) *core.Task {
	delete(s.queued, q.t.ID())
	s.event(policy.Polled, q.t.ID(), 0, "")
	if s.head > 64 && s.head*2 > len(s.fifo) {
		// Compact: drop the consumed prefix.
		n := copy(s.fifo, s.fifo[s.head:])
		clear(s.fifo[n:])
		s.fifo = s.fifo[:n]
		s.head = 0
	}
	return q.t
}

// current returns the session, or nil. A fresh session (a restarted
// policy) first gets a replay of the runnable tasks; without a session the
// pending events are dropped, since a future process gets a replay.
func (s *Scheduler) current() *stream {
	s.smu.Lock()
	st, fresh := s.st, s.fresh
	if fresh {
		s.fresh = false
		s.ans, s.ansSeq = nil, 0
	}
	s.smu.Unlock()
	if fresh {
		// Answers and requests of the previous session are meaningless.
		s.order, s.opos, s.orderSeq, s.sentSeq, s.behind = nil, 0, 0, 0, false
		s.replay()
	}
	if st == nil {
		s.events.B, s.nEvents, s.runnable = s.events.B[:0], 0, false
	}
	return st
}

// adopt takes the policy's latest answer if it is newer than the order in
// use.
func (s *Scheduler) adopt() {
	s.smu.Lock()
	if s.ansSeq > s.orderSeq {
		s.order, s.opos, s.orderSeq = s.ans, 0, s.ansSeq
		if s.orderSeq >= s.sentSeq {
			s.behind = false
		}
	}
	s.smu.Unlock()
}

// decide sends the pending events when the policy has a decision to make
// or enough accumulated, and waits for the answer when there is a choice.
func (s *Scheduler) decide() {
	st := s.current()
	if st == nil {
		return
	}
	s.adopt()
	if len(s.queued) < 2 {
		// No choice: the events wait for one (or for enough of them).
		if s.nEvents >= s.opts.FlushEvents {
			s.send(st)
		}
		return
	}
	if s.behind {
		// Catching up: FIFO meanwhile, one request in flight at a time.
		if s.orderSeq == s.sentSeq || s.nEvents >= s.opts.FlushEvents {
			s.send(st)
		}
		return
	}
	// Ask when a task became runnable since the last request, or when
	// the order ran out and the policy may have more to say (its last
	// answer was full).
	exhausted := s.opos >= len(s.order)
	full := len(s.order) >= s.opts.MaxDecision
	if s.runnable || (exhausted && full && s.orderSeq == s.sentSeq) {
		s.send(st)
	}
	if s.orderSeq < s.sentSeq {
		s.await(st)
	}
}

// replay tells a fresh policy about every runnable task, in FIFO order.
func (s *Scheduler) replay() {
	s.events.B, s.nEvents = s.events.B[:0], 0
	for _, q := range s.fifo[s.head:] {
		if cur, ok := s.queued[q.t.ID()]; ok && cur.seq == q.seq {
			info := s.info[q.t.ID()]
			s.event(policy.Spawned, q.t.ID(), info.Priority, info.Name)
		}
	}
	s.runnable = true
}

// send ships the pending events as one request. The sender goroutine
// writes it, so a stalled policy never blocks the scheduler beyond
// DecisionTimeout.
func (s *Scheduler) send(st *stream) {
	s.sentSeq++
	seq, maxN := s.sentSeq, s.opts.MaxDecision
	var hdr [2 * 10]byte
	h := wire.Enc{B: hdr[:0]}
	h.Uint(seq)
	h.Uint(uint64(maxN))
	ev := s.events.B
	st.append(func(e *wire.Enc) {
		e.Uint(uint64(len(h.B) + len(ev)))
		e.B = append(e.B, h.B...)
		e.B = append(e.B, ev...)
	})
	st.flush()
	s.events.B, s.nEvents, s.runnable = s.events.B[:0], 0, false
	s.requests.Add(1)
}

// await waits for the answer to the latest request, at most
// DecisionTimeout; a policy that misses it is bypassed until it catches
// up.
func (s *Scheduler) await(st *stream) {
	s.waited.Add(1)
	var deadline *time.Timer
	for {
		s.adopt()
		if s.orderSeq >= s.sentSeq {
			if deadline != nil {
				deadline.Stop()
			}
			return
		}
		if deadline == nil {
			deadline = time.NewTimer(s.opts.DecisionTimeout)
		}
		select {
		case <-s.answerCh:
		case <-st.done:
			deadline.Stop()
			return
		case <-deadline.C:
			s.behind = true
			s.log.Warn("the scheduler policy did not answer in time; running tasks in FIFO order until it catches up",
				"plugin", s.name, "timeout", s.opts.DecisionTimeout)
			return
		}
	}
}

// parkIdle parks until a wake, an I/O event or the next timer deadline.
func (s *Scheduler) parkIdle(done <-chan struct{}) {
	// Tell the policy what happened before sleeping.
	if s.nEvents > 0 {
		if st := s.current(); st != nil && !s.behind && s.nEvents > 0 {
			s.send(st)
		}
	}
	if spi.CanAutoAdvance(s.time) {
		s.parkFor(0)
		if len(s.queued) == 0 && s.injectLen.Load() == 0 && len(s.deferred) == 0 {
			spi.AutoAdvance(s.time)
		}
		return
	}
	s.p.Hooks.RunBeforePark()
	timeout := spi.Parking(s.time, -1)
	s.parked.Store(true)
	// Parked is published before the global queue is checked, and an
	// injector stores its length before it loads parked (both
	// sequentially consistent): one of the two sees the other.
	if s.injectLen.Load() == 0 && !s.isClosed.Load() && !isDone(done) {
		s.parkOn(timeout)
	}
	s.parked.Store(false)
	spi.Unparked(s.time)
	s.afterPark()
	s.p.Hooks.RunAfterUnpark()
}

func (s *Scheduler) parkFor(d time.Duration) {
	s.parkOn(d)
	s.afterPark()
}

func (s *Scheduler) parkOn(timeout time.Duration) {
	if s.driver != nil {
		if err := s.driver.Park(timeout); err != nil {
			s.log.Error("plugin scheduler: driver park failed", "err", err)
		}
		return
	}
	switch {
	case timeout == 0:
		select {
		case <-s.unparkCh:
		default:
		}
	case timeout < 0:
		<-s.unparkCh
	default:
		s.timer.Reset(timeout)
		select {
		case <-s.unparkCh:
		case <-s.timer.C:
		}
		s.timer.Stop()
	}
}

func (s *Scheduler) afterPark() {
	spi.Fire(s.time)
	if len(s.deferred) == 0 {
		return
	}
	d := s.deferred
	s.deferred = s.spare[:0]
	for i, w := range d {
		s.cx.Wake(w)
		d[i] = nil
	}
	s.spare = d[:0]
}

// SchedulerStats are a plugin scheduler's counters.
type SchedulerStats struct {
	// Requests counts batches sent to the policy; Waited counts the times
	// the scheduler waited for an answer.
	Requests, Waited uint64
	// Decided counts tasks run in the policy's order; FIFO counts tasks
	// run in FIFO order (not in the order, or no policy).
	Decided, FIFO uint64
}

// Stats returns the scheduler's counters.
func (s *Scheduler) Stats() SchedulerStats {
	return SchedulerStats{Requests: s.requests.Load(), Waited: s.waited.Load(), Decided: s.decided.Load(), FIFO: s.fifoPicks.Load()}
}

// Restarts reports how many times the policy process was restarted.
func (s *Scheduler) Restarts() int { return s.sup.restarts() }

// KillProcess kills the policy process at once (SIGKILL), as a crash
// would. The restart policy applies; tasks keep running in FIFO order.
func (s *Scheduler) KillProcess() error {
	s.sup.mu.Lock()
	p := s.sup.proc
	s.sup.mu.Unlock()
	if p == nil {
		return s.err(ErrPluginUnavailable)
	}
	proc, err := findProcess(p.pid)
	if err != nil {
		return err
	}
	return proc.Kill()
}

// Shutdown closes the scheduler, cancels every task, closes the driver and
// ends the policy process; see core.Scheduler.
func (s *Scheduler) Shutdown() {
	s.shutdown.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.isClosed.Store(true)
		s.mu.Unlock()
		close(s.shutdownCh)
		if owner := s.ownerGoroutine.Load(); owner != 0 && owner == spi.GoroutineID() {
			// Called from inside a task: cancel now; the enclosing
			// BlockOn closes the driver. The policy process ends in
			// the background.
			s.cancelAll()
			go s.stopPlugin()
			return
		}
		s.unpark()
		<-s.core // never given back
		s.cancelAll()
		s.closeDriver()
		s.stopPlugin()
	})
}

// stopPlugin ends the session and the process, waiting for its exit.
func (s *Scheduler) stopPlugin() {
	s.sup.stop()
	s.smu.Lock()
	st := s.st
	s.smu.Unlock()
	if st != nil {
		st.closeSend()
		select {
		case <-st.done:
		case <-time.After(5 * time.Second):
			st.abort()
			<-st.done
		}
	}
	s.sup.wait()
}

func (s *Scheduler) closeDriver() {
	s.closeDrv.Do(func() {
		if s.driver == nil {
			return
		}
		if err := s.driver.Close(); err != nil {
			s.log.Error("plugin scheduler: closing driver", "err", err)
		}
	})
}

// cancelAll cancels every task and empties the queues (core holder only).
func (s *Scheduler) cancelAll() {
	s.tasks.ShutdownAll(0)
	for _, q := range s.fifo[s.head:] {
		if q.t != nil {
			spi.Shutdown(q.t)
		}
	}
	s.fifo, s.head = nil, 0
	clear(s.queued)
	s.mu.Lock()
	rest := s.inject
	s.inject = nil
	s.injectLen.Store(0)
	s.mu.Unlock()
	for _, in := range rest {
		spi.Shutdown(in.t)
	}
	s.deferred = nil
}
