package plugins

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
	"github.com/weftrt/weft/plugins/policy"
	"github.com/weftrt/weft/schedulers/currentthread"
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
// by a scheduler policy plugin: a currentthread.Scheduler whose Policy
// (currentthread.NewWithPolicy) is served by another process. Everything
// but the run order (one BlockOn caller holding the core at a time, the
// global queue, the driver, the timers, parking, shutdown, metrics) is the
// current-thread scheduler's; this type adds the session with the policy
// process, its supervision and its fallback.
//
// # Protocol
//
// The host keeps the tasks; the policy sees ids. The scheduler records an
// event for each task that becomes runnable (Spawned, with the TaskInfo
// given to SpawnWith; Woken, with the priority again), that it takes out of
// its run queue to poll (Polled), and that finishes (Completed): the
// events of currentthread.Policy, by task id. Events travel in batches,
// each a request on the session's stream; the policy answers each
// request, in order, with the ids of the tasks to run next, first first
// (at most MaxDecision of them); the latest answer replaces the previous
// one.
//
// When it picks the next task, the scheduler asks for a fresh order only
// if a task became runnable since its last request, or if it ran out of
// the last order while tasks remain; and it waits for the answer only
// when there is a choice, that is when more than one task is runnable.
// Otherwise the events wait (at most FlushEvents of them, or until no task
// is runnable) and travel with the next request. It then runs the first
// task of the order that is still runnable, or, when the order has none,
// the task that became runnable first (FIFO): runnable tasks the policy
// did not mention run after those it did.
//
// # Failure
//
// The scheduler never stops running tasks because of its policy. While no
// process serves it (a crash, before the restart), or while the policy is
// behind (it missed DecisionTimeout, until it answers the latest
// request), tasks run in FIFO order. A restarted policy first receives a
// Spawned event for every runnable task, in FIFO order, with its priority.
type Scheduler struct {
	*currentthread.Scheduler
	pol *remotePolicy
}

// remotePolicy is the currentthread.Policy that the policy process
// serves. Its Policy methods run on the scheduler's goroutine; onFrame and
// onEnd on the session's.
type remotePolicy struct {
	opts SchedulerOptions
	name string
	log  *slog.Logger
	sup  *supervisor

	// smu guards the session and the policy's latest answer.
	smu      sync.Mutex
	st       *stream
	fresh    bool // a new session the owner has not replayed to yet
	ans      []core.TaskID
	ansSeq   uint64
	answerCh chan struct{} // capacity 1: an answer arrived

	// pmu guards pending: the TaskInfo of tasks spawned from outside the
	// scheduler's goroutine, until their Spawned event. npending mirrors
	// its length, so the common case takes no lock.
	pmu      sync.Mutex
	pending  map[*core.Task]TaskInfo
	npending atomic.Int64

	// Owned by the scheduler's goroutine.
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

	waited, decided, fifoPicks, requests atomic.Uint64
}

type queuedTask struct {
	t   *core.Task
	seq uint64
}

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
	if p.Log == nil {
		p.Log = log
	}
	pol := &remotePolicy{
		opts:     o,
		name:     o.Launch.name(),
		log:      log,
		answerCh: make(chan struct{}, 1),
		pending:  map[*core.Task]TaskInfo{},
		queued:   map[core.TaskID]queuedTask{},
		info:     map[core.TaskID]TaskInfo{},
	}
	pol.sup = newSupervisor(&pol.opts.Launch, o.Restart, log, pol.open)
	if err := pol.sup.start(); err != nil {
		return nil, err
	}
	cfg := currentthread.DefaultConfig()
	cfg.EventInterval = o.EventInterval
	ct, err := currentthread.NewWithPolicy(cfg, p, pol)
	if err != nil {
		pol.stopPlugin()
		return nil, fmt.Errorf("plugins: scheduler: %w", err)
	}
	return &Scheduler{Scheduler: ct, pol: pol}, nil
}

func (s *remotePolicy) err(cause error) error {
	return &Error{Plugin: s.name, Path: s.opts.Launch.Path, Err: cause}
}

// Spawn binds t and queues it, with the TaskInfo SpawnWith attached. A
// spawn from inside a task reaches the current-thread scheduler directly
// and its policy's Spawned on the same call stack, which finds the
// TaskInfo there; a spawn from another goroutine (through the runtime)
// comes here, and the TaskInfo waits in pending for the Spawned event.
func (s *Scheduler) Spawn(t *core.Task, from core.Worker) error {
	info, ok := takeSpawnInfo(t)
	ok = ok && info != (TaskInfo{})
	if ok {
		s.pol.remember(t, info)
	}
	err := s.Scheduler.Spawn(t, from)
	if err != nil && ok {
		s.pol.forget(t)
	}
	return err
}

func (s *remotePolicy) remember(t *core.Task, info TaskInfo) {
	s.pmu.Lock()
	s.pending[t] = info
	s.npending.Store(int64(len(s.pending)))
	s.pmu.Unlock()
}

// forget drops the pending TaskInfo of t and returns it, if any.
func (s *remotePolicy) forget(t *core.Task) (TaskInfo, bool) {
	s.pmu.Lock()
	info, ok := s.pending[t]
	if ok {
		delete(s.pending, t)
		s.npending.Store(int64(len(s.pending)))
	}
	s.pmu.Unlock()
	return info, ok
}

// spawnInfo returns the TaskInfo t was spawned with, or the zero TaskInfo.
func (s *remotePolicy) spawnInfo(t *core.Task) TaskInfo {
	if s.npending.Load() > 0 {
		if info, ok := s.forget(t); ok {
			return info
		}
	}
	info, _ := takeSpawnInfo(t)
	return info
}

// Spawned implements currentthread.Policy.
func (s *remotePolicy) Spawned(t *core.Task) { s.push(t, true, s.spawnInfo(t)) }

// Woken implements currentthread.Policy.
func (s *remotePolicy) Woken(t *core.Task) { s.push(t, false, TaskInfo{}) }

// Completed implements currentthread.Policy.
func (s *remotePolicy) Completed(t *core.Task) {
	s.event(policy.Completed, t.ID(), 0, "")
	delete(s.info, t.ID())
}

// push makes t runnable and records the event.
func (s *remotePolicy) push(t *core.Task, spawned bool, info TaskInfo) {
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

// Next implements currentthread.Policy: the first runnable task of the
// policy's order, or the oldest runnable task. With none runnable (the
// scheduler is about to park or look for I/O) it tells the policy what
// happened first.
func (s *remotePolicy) Next() *core.Task {
	if len(s.queued) == 0 {
		if s.nEvents > 0 {
			if st := s.current(); st != nil && !s.behind && s.nEvents > 0 {
				s.send(st)
			}
		}
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

// open is the supervisor's start function: a session on a fresh process.
func (s *remotePolicy) open(p *process) (func() error, error) {
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
func (s *remotePolicy) onFrame(st *stream, frame []byte) error {
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

func (s *remotePolicy) onEnd(st *stream, err error) {
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

// event appends one event to the pending batch.
func (s *remotePolicy) event(k policy.Kind, id core.TaskID, prio int, name string) {
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

// current returns the session, or nil. A fresh session (a restarted
// policy) first gets a replay of the runnable tasks; without a session the
// pending events are dropped, since a future process gets a replay.
func (s *remotePolicy) current() *stream {
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
func (s *remotePolicy) adopt() {
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
func (s *remotePolicy) decide() {
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
func (s *remotePolicy) replay() {
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
func (s *remotePolicy) send(st *stream) {
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
func (s *remotePolicy) await(st *stream) {
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

// take removes q from the run queue and records its Polled event.
func (s *remotePolicy) take(q queuedTask) *core.Task {
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

// stopPlugin ends the session and the process, waiting for its exit.
func (s *remotePolicy) stopPlugin() {
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

// Close implements io.Closer: the scheduler calls it once after Shutdown.
// It ends the session and the process and drops the tasks still queued
// (the scheduler has cancelled them).
func (s *remotePolicy) Close() error {
	s.stopPlugin()
	s.fifo, s.head = nil, 0
	clear(s.queued)
	s.pmu.Lock()
	clear(s.pending)
	s.npending.Store(0)
	s.pmu.Unlock()
	return nil
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
	return SchedulerStats{Requests: s.pol.requests.Load(), Waited: s.pol.waited.Load(), Decided: s.pol.decided.Load(), FIFO: s.pol.fifoPicks.Load()}
}

// Restarts reports how many times the policy process was restarted.
func (s *Scheduler) Restarts() int { return s.pol.sup.restarts() }

// KillProcess kills the policy process at once (SIGKILL), as a crash
// would. The restart policy applies; tasks keep running in FIFO order.
func (s *Scheduler) KillProcess() error {
	s.pol.sup.mu.Lock()
	p := s.pol.sup.proc
	s.pol.sup.mu.Unlock()
	if p == nil {
		return s.pol.err(ErrPluginUnavailable)
	}
	proc, err := findProcess(p.pid)
	if err != nil {
		return err
	}
	return proc.Kill()
}
