package conformance

import (
	"errors"
	"fmt"
	"iter"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// Sync runs the semantic suite of weft's sync primitives and channels
// (package lib/wsync and its subpackages) on runtimes built with configure,
// which selects the scheduler under test:
//
//	conformance.Sync(t, func(b *rt.Builder) { b.Scheduler("workstealing").Workers(4) })
//
// Every behaviour builds its own runtime and runs real tasks: waiters on
// one task woken by another, on whatever worker the scheduler picks. It
// checks fairness, the documented wake-up rules, the cooperative budget,
// and cancellation races: tasks aborted at the moment a primitive hands
// them a permit, a lock or a notification, whose wake must pass to the next
// waiter, and receives and sends abandoned by a select, which must lose
// nothing. Verdicts never depend on timing; a lost wake hangs a behaviour,
// which the watchdog turns into a failure naming it.
func Sync(t *testing.T, configure func(*rt.Builder)) {
	for _, b := range syncSuite {
		t.Run(b.name, func(t *testing.T) { b.run(t, configure) })
	}
}

// SyncBehaviours returns the names of the behaviours Sync checks, in
// order.
func SyncBehaviours() []string {
	var names []string
	for _, b := range syncSuite {
		names = append(names, b.name)
	}
	return names
}

type syncBehaviour struct {
	name string
	run  func(t *testing.T, configure func(*rt.Builder))
}

// syncCase runs body as the root task of a fresh runtime.
func syncCase(body func(c *syncCtx) error) func(*testing.T, func(*rt.Builder)) {
	return func(t *testing.T, configure func(*rt.Builder)) {
		syncRun(t, syncRuntime(t, configure), body)
	}
}

var syncSuite = []syncBehaviour{
	{"MutexExcludesTasksThatHoldItAcrossYields", syncCase(testSyncMutexExcludes)},
	{"MutexHandsTheLockToWaitingTasksInFIFOOrder", syncCase(testSyncMutexFIFO)},
	{"MutexLockAbortedAtHandOverPassesTheLockOn", syncCase(testSyncMutexAbortAtHandOver)},
	{"RWMutexLetsReadersShareAndWritersExclude", syncCase(testSyncRWMutex)},
	{"SemaphoreServesALargeRequestBeforeSmallerOnesBehindIt", syncCase(testSyncSemaphoreStrictFIFO)},
	{"SemaphoreAcquireAbortedAtGrantPassesThePermitOn", syncCase(testSyncSemaphoreAbortAtGrant)},
	{"SemaphoreCloseFailsEveryWaitingTask", syncCase(testSyncSemaphoreClose)},
	{"SemaphoreLoopYieldsAfterBudgetAcquires", syncCase(testSyncSemaphoreBudget)},
	{"NotifyOneStoresOnePermitForTheNextTask", syncCase(testSyncNotifyPermit)},
	{"NotifyWaitersWakesOnlyTheTasksAlreadyWaiting", syncCase(testSyncNotifyWaiters)},
	{"NotifyOneToAnAbortedTaskIsPassedOn", syncCase(testSyncNotifyAbort)},
	{"BarrierReleasesEachGenerationWithOneLeader", syncCase(testSyncBarrier)},
	{"BarrierWaitAbortedBeforeReleaseWithdrawsItsArrival", syncCase(testSyncBarrierAbort)},
	{"OnceCellRunsOneInitialiserForManyTasks", syncCase(testSyncOnceCell)},
	{"OnceCellInitialiserAbortedHandsOverToAWaitingTask", syncCase(testSyncOnceCellAbort)},
	{"OneshotDeliversAValueAcrossTasks", syncCase(testSyncOneshot)},
	{"OneshotSenderClosedWithoutSendingEndsTheReceive", syncCase(testSyncOneshotClosed)},
	{"MpscPingPongBouncesEveryMessage", syncCase(testSyncPingPong)},
	{"MpscProducersDeliverEveryMessageInPerProducerOrder", syncCase(testSyncFanIn)},
	{"MpscReceiveLoopYieldsAfterBudgetMessages", syncCase(testSyncRecvBudget)},
	{"MpscReceiveAbandonedBySelectLosesNoMessage", syncCase(testSyncRecvAbandoned)},
	{"MpscSendAbortedWhileWaitingReturnsItsCapacity", syncCase(testSyncSendAborted)},
	{"MpscUnboundedDeliversEverythingBeforeClosing", syncCase(testSyncUnbounded)},
	{"BroadcastEveryReceiverTaskSeesEveryMessageInOrder", syncCase(testSyncBroadcast)},
	{"BroadcastLaggingReceiverLearnsHowManyItMissed", syncCase(testSyncBroadcastLag)},
	{"WatchReceiversEndOnTheLatestValue", syncCase(testSyncWatch)},
	{"PrimitivesKeepTheirInvariantsUnderRandomAborts", syncCase(testSyncChaos)},
	{"ShutdownDropsWaitingFuturesAndReturnsTheirPermits", testSyncShutdown},
	{"NoGoroutineIsLeftBehind", testSyncNoLeak},
}

// syncRuntime builds the runtime under test, ignoring the environment.
func syncRuntime(t *testing.T, configure func(*rt.Builder)) *rt.Runtime {
	t.Helper()
	b := rt.NewBuilder().IgnoreEnv()
	if configure != nil {
		configure(b)
	}
	r, err := b.Build()
	require.NoError(t, err, "building the runtime")
	t.Cleanup(r.ShutdownBackground)
	return r
}

// syncHangLimit bounds a behaviour; passing runs take milliseconds.
func syncHangLimit() time.Duration { return hangLimit }

// syncRun runs body as the root task under the watchdog and fails the test
// with its error.
func syncRun(t *testing.T, r *rt.Runtime, body func(c *syncCtx) error) {
	t.Helper()
	type out struct{ err, jerr error }
	ch := make(chan out, 1)
	go func() {
		err, jerr := rt.BlockOn(r, syncTask(body))
		ch <- out{err, jerr}
	}()
	select {
	case o := <-ch:
		require.NoError(t, o.jerr, "the root task failed")
		require.NoError(t, o.err)
	case <-time.After(syncHangLimit()):
		r.ShutdownBackground()
		t.Fatalf("the behaviour did not finish within %v: a wake was lost", syncHangLimit())
	}
}

// Task bodies are written as straight-line code: each runs as a coroutine
// (iter.Pull) inside a real task and suspends its task while it awaits, so
// every future is polled on a runtime worker with the task's own Context,
// as hand-written poll code would be. Bodies report failures as errors;
// t.Fatal must not run in a coroutine.

// syncCtx is a running task body's handle on its task.
type syncCtx struct {
	cx    *core.Context
	yield func(struct{}) bool
}

// errSyncAbandoned unwinds a body whose task was dropped while it awaited.
var errSyncAbandoned = errors.New("conformance: task dropped while awaiting")

type syncCo struct {
	c    *syncCtx
	next func() (struct{}, bool)
	stop func()
	err  error
}

// syncTask returns a future that runs body and resolves to its error.
// Dropping the future (an abort, a shutdown) drops whatever the body was
// awaiting.
func syncTask(body func(c *syncCtx) error) core.Future[error] {
	f := &syncCo{c: &syncCtx{}}
	f.next, f.stop = iter.Pull(func(yield func(struct{}) bool) {
		f.c.yield = yield
		defer func() {
			if r := recover(); r != nil && r != errSyncAbandoned {
				panic(r)
			}
		}()
		f.err = body(f.c)
	})
	return f
}

func (f *syncCo) Poll(cx *core.Context) (error, bool) {
	f.c.cx = cx
	if _, more := f.next(); more {
		return nil, false
	}
	return f.err, true
}

func (f *syncCo) Drop() { f.stop() }

// syncAwait polls fut on the body's task until it is ready.
func syncAwait[T any](c *syncCtx, fut core.Future[T]) T {
	v, _ := syncAwaitMarked(c, fut, nil)
	return v
}

// syncAwaitMarked is syncAwait that also sets queued once fut has returned
// pending with budget to spare: its waiter is then in the primitive's queue
// (a pending caused by a spent budget queues nothing). It reports whether
// the first poll was pending.
func syncAwaitMarked[T any](c *syncCtx, fut core.Future[T], queued *atomic.Bool) (T, bool) {
	waited := false
	for {
		before := c.cx.BudgetRemaining()
		if v, ok := fut.Poll(c.cx); ok {
			if queued != nil {
				queued.Store(true)
			}
			return v, waited
		}
		if queued != nil && before > 0 {
			queued.Store(true)
		}
		waited = true
		if !c.yield(struct{}{}) {
			core.Drop(fut)
			panic(errSyncAbandoned)
		}
	}
}

// yieldNow lets the other tasks run once.
func (c *syncCtx) yieldNow() { syncAwait(c, core.Yield()) }

// until yields until cond holds.
func (c *syncCtx) until(cond func() bool) {
	for !cond() {
		c.yieldNow()
	}
}

// spawn starts body as another task.
func (c *syncCtx) spawn(body func(c *syncCtx) error) *core.JoinHandle[error] {
	return core.Spawn(c.cx, syncTask(body))
}

// join awaits a task started with spawn and returns its body's error, or
// the task's JoinError.
func (c *syncCtx) join(h *core.JoinHandle[error]) error {
	r := syncAwait(c, h)
	if r.Err != nil {
		return r.Err
	}
	return r.Value
}

// joinAll joins every task and returns the first error.
func (c *syncCtx) joinAll(hs []*core.JoinHandle[error]) error {
	var first error
	for _, h := range hs {
		if err := c.join(h); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// syncCheck turns a failed expectation into an error.
func syncCheck(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// spawnQueued spawns n tasks built by body, one at a time, each only after
// the previous one's wait is queued, so the primitive's queue holds them in
// index order. body receives the index and the flag to pass to
// syncAwaitMarked.
func (c *syncCtx) spawnQueued(n int, body func(i int, queued *atomic.Bool) func(c *syncCtx) error) []*core.JoinHandle[error] {
	hs := make([]*core.JoinHandle[error], n)
	for i := range hs {
		queued := new(atomic.Bool)
		hs[i] = c.spawn(body(i, queued))
		c.until(queued.Load)
	}
	return hs
}
