package conformance

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/tasks"
	"github.com/weftrt/weft/lib/wsync"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/lib/wsync/oneshot"
	"github.com/weftrt/weft/runtime/rt"
)

// Tasks runs the semantic suite of the task utilities (package lib/tasks:
// CancellationToken, TaskTracker, JoinSet) and of coroutine tasks (package
// lib/co) on runtimes built with configure, which selects the scheduler
// under test:
//
//	conformance.Tasks(t, func(b *rt.Builder) { b.Scheduler("workstealing").Workers(4) })
//
// Each behaviour builds its own runtime and runs real tasks on whatever
// workers the scheduler picks. The races (a waiter aborted at the moment it
// is woken, a token cancelled while its waiters are dropped) are repeated
// for a bounded number of rounds; verdicts never depend on timing, and a
// lost wake hangs a behaviour, which the watchdog turns into a failure
// naming it.
func Tasks(t *testing.T, configure func(*rt.Builder)) {
	for _, b := range tasksSuite {
		t.Run(b.name, func(t *testing.T) { b.run(t, configure) })
	}
}

// TasksBehaviours returns the names of the behaviours Tasks checks, in
// order.
func TasksBehaviours() []string {
	var names []string
	for _, b := range tasksSuite {
		names = append(names, b.name)
	}
	return names
}

type tasksBehaviour struct {
	name string
	run  func(t *testing.T, configure func(*rt.Builder))
}

// coCase runs body as the root coroutine task of a fresh runtime.
func coCase(body func(c *co.Ctx) error) func(*testing.T, func(*rt.Builder)) {
	return func(t *testing.T, configure func(*rt.Builder)) {
		coRun(t, syncRuntime(t, configure), body)
	}
}

var tasksSuite = []tasksBehaviour{
	{"CancellingATokenWakesEveryTaskAwaitingItOrADescendant", coCase(testTokenWakesAll)},
	{"CancellingAChildLeavesItsParentAndSiblingsRunning", coCase(testTokenChild)},
	{"CancelRacingWithDroppedWaitersLosesNoWake", coCase(testTokenRace)},
	{"TrackerWaitResolvesOnlyWhenClosedAndEveryTaskEnded", coCase(testTrackerWait)},
	{"TrackerUncountsAbortedAndPanickedTasks", coCase(testTrackerAbortPanic)},
	{"TrackerWaitAbortedAtItsWakeLeavesTheNextWaiterResolving", coCase(testTrackerRace)},
	{"JoinSetJoinsEveryTaskExactlyOnce", coCase(testJoinSetAll)},
	{"JoinSetJoinNextAbortedAtItsWakeLosesNoOutput", coCase(testJoinSetRace)},
	{"JoinSetAbortAllCancelsRunningTasksAndKeepsFinishedOutputs", coCase(testJoinSetAbortAll)},
	{"DroppingAJoinSetAbortsItsTasks", coCase(testJoinSetDrop)},
	{"CoroutineTasksPingPongThroughChannels", coCase(testCoPingPong)},
	{"ManyCoroutineTasksSuspendAtOnceAndAllResume", coCase(testCoMany)},
	{"AbortingACoroutineTaskUnwindsItsBody", coCase(testCoAbort)},
	{"ShutdownUnwindsSuspendedCoroutineTasks", testCoShutdown},
	{"StressTokensTrackersAndJoinSetsTogether", coCase(testTasksStress)},
	{"NoGoroutineIsLeftBehind", testTasksNoLeak},
}

// coRun runs body as the root coroutine task under the watchdog and fails
// the test with its error. Bodies report failures as errors; t.Fatal must
// not run in a coroutine.
func coRun(t *testing.T, r *rt.Runtime, body func(c *co.Ctx) error) {
	t.Helper()
	ch := make(chan error, 1)
	go func() {
		err := co.Run(r, body)
		ch <- err
	}()
	select {
	case err := <-ch:
		require.NoError(t, err)
	case <-time.After(hangLimit):
		r.ShutdownBackground()
		t.Fatalf("the behaviour did not finish within %v: a wake was lost", hangLimit)
	}
}

// coUntil yields until cond holds.
func coUntil(c *co.Ctx, cond func() bool) {
	for !cond() {
		c.Yield()
	}
}

// coJoin awaits a coroutine task returning an error.
func coJoin(c *co.Ctx, h *core.JoinHandle[error]) error {
	err, jerr := co.AwaitResult(c, h)
	if jerr != nil {
		return jerr
	}
	return err
}

func testTokenWakesAll(c *co.Ctx) error {
	root := tasks.NewCancellationToken()
	const n = 40
	var waiting atomic.Int32
	var hs []*core.JoinHandle[error]
	for i := range n {
		tok := root
		for range i % 4 {
			tok = tok.Child()
		}
		hs = append(hs, co.Go(c, func(c *co.Ctx) error {
			f := tok.Cancelled()
			if _, ok := f.Poll(c.Context()); ok {
				return errors.New("cancelled before the cancel")
			}
			waiting.Add(1)
			co.Await(c, core.Future[core.Unit](f))
			return nil
		}))
	}
	coUntil(c, func() bool { return waiting.Load() == n })
	co.Go(c, func(c *co.Ctx) int { root.Cancel(); return 0 })
	for _, h := range hs {
		if err := coJoin(c, h); err != nil {
			return err
		}
	}
	return nil
}

func testTokenChild(c *co.Ctx) error {
	root := tasks.NewCancellationToken()
	a, b := root.Child(), root.Child()
	aa := a.Child()
	var started atomic.Bool
	h := co.Go(c, func(c *co.Ctx) error {
		started.Store(true)
		co.Await(c, core.Future[core.Unit](b.Cancelled()))
		return nil
	})
	coUntil(c, started.Load)
	a.Cancel()
	if !aa.IsCancelled() || root.IsCancelled() || b.IsCancelled() {
		return errors.New("cancelling a child reached beyond its own subtree")
	}
	// b's waiter is still waiting: a select of it and a ready future
	// takes the ready one.
	s := co.Await(c, future.Select[core.Unit](b.Cancelled(), future.Ready(core.Unit{})))
	if s.Index != 1 {
		return errors.New("b's Cancelled resolved though b was not cancelled")
	}
	root.Cancel()
	return coJoin(c, h)
}

// testTokenRace: in each round two tasks await a token; one of them is
// aborted as the token is cancelled. The other always wakes.
func testTokenRace(c *co.Ctx) error {
	for round := range 300 {
		tok := tasks.NewCancellationToken()
		var ready atomic.Int32
		mk := func() *core.JoinHandle[error] {
			return co.Go(c, func(c *co.Ctx) error {
				f := tok.Cancelled()
				_, _ = f.Poll(c.Context())
				ready.Add(1)
				co.Await(c, core.Future[core.Unit](f))
				return nil
			})
		}
		victim, other := mk(), mk()
		coUntil(c, func() bool { return ready.Load() == 2 })
		canceller := co.Go(c, func(c *co.Ctx) int { tok.Cancel(); return 0 })
		if round%2 == 0 {
			victim.Abort()
		} else {
			c.Yield()
			victim.Abort()
		}
		co.Await(c, canceller)
		if err := coJoin(c, other); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if err := coJoin(c, victim); err != nil && !core.IsCancelled(err) {
			return fmt.Errorf("round %d: victim: %w", round, err)
		}
	}
	return nil
}

func testTrackerWait(c *co.Ctx) error {
	tt := tasks.NewTaskTracker()
	const n = 50
	var ended atomic.Int32
	gate := wsync.Notify{}
	var parked atomic.Int32
	for i := range n {
		tasks.Spawn(tt, c, core.Future[int](co.Future(func(c *co.Ctx) int {
			if i%2 == 0 {
				f := gate.Notified()
				parked.Add(1)
				co.Await(c, core.Future[core.Unit](f))
			}
			for range i % 3 {
				c.Yield()
			}
			ended.Add(1)
			return i
		})))
	}
	coUntil(c, func() bool { return parked.Load() == n/2 })
	var resolved atomic.Bool
	waiter := co.Go(c, func(c *co.Ctx) error {
		co.Await(c, core.Future[core.Unit](tt.Wait()))
		resolved.Store(true)
		if ended.Load() != n {
			return fmt.Errorf("Wait resolved with %d of %d tasks ended", ended.Load(), n)
		}
		return nil
	})
	// Not closed: Wait must not resolve even once every task has ended.
	gate.NotifyWaiters()
	coUntil(c, func() bool { return tt.Len() == 0 })
	for range 10 {
		c.Yield()
	}
	if resolved.Load() {
		return errors.New("Wait resolved before Close")
	}
	tt.Close()
	return coJoin(c, waiter)
}

func testTrackerAbortPanic(c *co.Ctx) error {
	tt := tasks.NewTaskTracker()
	var parked atomic.Bool
	stuck := tasks.Spawn(tt, c, core.Future[int](co.Future(func(c *co.Ctx) int {
		parked.Store(true)
		co.Await(c, future.Pending[core.Unit]())
		return 0
	})))
	tasks.Spawn(tt, c, core.Future[int](co.Future(func(c *co.Ctx) int {
		c.Yield()
		panic("tracked task panics")
	})))
	coUntil(c, parked.Load)
	tt.Close()
	stuck.Abort()
	co.Await(c, core.Future[core.Unit](tt.Wait()))
	if tt.Len() != 0 {
		return fmt.Errorf("tracker still counts %d tasks", tt.Len())
	}
	return nil
}

// testTrackerRace: a Wait is aborted as the last task ends; a second one
// still resolves.
func testTrackerRace(c *co.Ctx) error {
	for round := range 200 {
		tt := tasks.NewTaskTracker()
		tx, rx := oneshot.New[int]()
		tasks.Spawn(tt, c, core.Future[int](co.Future(func(c *co.Ctx) int {
			v, _ := co.AwaitResult(c, rx.Recv())
			return v
		})))
		tt.Close()
		var ready atomic.Int32
		mk := func() *core.JoinHandle[error] {
			return co.Go(c, func(c *co.Ctx) error {
				f := tt.Wait()
				_, _ = f.Poll(c.Context())
				ready.Add(1)
				co.Await(c, core.Future[core.Unit](f))
				return nil
			})
		}
		victim, other := mk(), mk()
		coUntil(c, func() bool { return ready.Load() == 2 })
		_ = tx.Send(round)
		if round%2 == 1 {
			c.Yield()
		}
		victim.Abort()
		if err := coJoin(c, other); err != nil {
			return fmt.Errorf("round %d: %w", round, err)
		}
		if err := coJoin(c, victim); err != nil && !core.IsCancelled(err) {
			return fmt.Errorf("round %d: victim: %w", round, err)
		}
	}
	return nil
}

func testJoinSetAll(c *co.Ctx) error {
	js := tasks.NewJoinSet[int]()
	const n = 200
	for i := range n {
		js.Spawn(c, core.Future[int](co.Future(func(c *co.Ctx) int {
			for range (i * 7) % 5 {
				c.Yield()
			}
			return i
		})))
	}
	if js.Len() != n {
		return fmt.Errorf("Len %d after %d spawns", js.Len(), n)
	}
	seen := make([]bool, n)
	for k := 0; ; k++ {
		res := co.Await(c, core.Future[tasks.JoinResult[int]](js.JoinNext()))
		if res.Empty {
			if k != n {
				return fmt.Errorf("joined %d tasks, want %d", k, n)
			}
			break
		}
		if res.Err != nil {
			return res.Err
		}
		if seen[res.Value] {
			return fmt.Errorf("task %d joined twice", res.Value)
		}
		seen[res.Value] = true
	}
	if js.Len() != 0 {
		return fmt.Errorf("Len %d after joining everything", js.Len())
	}
	return nil
}

// testJoinSetRace: a task awaiting JoinNext is aborted as the set's task
// finishes; the output is then joined exactly once, by that task or by the
// next JoinNext.
func testJoinSetRace(c *co.Ctx) error {
	for round := range 300 {
		js := tasks.NewJoinSet[int]()
		tx, rx := oneshot.New[int]()
		js.Spawn(c, core.Future[int](co.Future(func(c *co.Ctx) int {
			v, _ := co.AwaitResult(c, rx.Recv())
			return v
		})))
		var ready atomic.Bool
		victim := co.Go(c, func(c *co.Ctx) int {
			f := js.JoinNext()
			if _, ok := f.Poll(c.Context()); ok {
				return -2
			}
			ready.Store(true)
			res := co.Await(c, core.Future[tasks.JoinResult[int]](f))
			if res.Empty || res.Err != nil {
				return -3
			}
			return res.Value
		})
		coUntil(c, ready.Load)
		_ = tx.Send(round)
		if round%3 == 1 {
			c.Yield()
		}
		victim.Abort()
		got, err := co.AwaitResult(c, victim)
		switch {
		case err == nil && got == round:
			// The victim joined it: the set must now be empty.
			if res := co.Await(c, core.Future[tasks.JoinResult[int]](js.JoinNext())); !res.Empty {
				return fmt.Errorf("round %d: output joined twice", round)
			}
		case core.IsCancelled(err):
			res := co.Await(c, core.Future[tasks.JoinResult[int]](js.JoinNext()))
			if res.Empty || res.Err != nil || res.Value != round {
				return fmt.Errorf("round %d: the output was lost with the aborted JoinNext: %+v", round, res)
			}
		default:
			return fmt.Errorf("round %d: victim returned %d, %v", round, got, err)
		}
	}
	return nil
}

func testJoinSetAbortAll(c *co.Ctx) error {
	js := tasks.NewJoinSet[int]()
	var unwound, parked atomic.Int32
	const stuck = 20
	for range stuck {
		js.Spawn(c, core.Future[int](co.Future(func(c *co.Ctx) int {
			defer unwound.Add(1)
			parked.Add(1)
			co.Await(c, future.Pending[core.Unit]())
			return -1
		})))
	}
	fin := js.Spawn(c, future.Ready(7))
	coUntil(c, func() bool { return parked.Load() == stuck && fin.IsFinished() })
	js.AbortAll()
	cancelled, values := 0, 0
	for {
		res := co.Await(c, core.Future[tasks.JoinResult[int]](js.JoinNext()))
		if res.Empty {
			break
		}
		switch {
		case core.IsCancelled(res.Err):
			cancelled++
		case res.Err == nil && res.Value == 7:
			values++
		default:
			return fmt.Errorf("unexpected result %+v", res)
		}
	}
	if cancelled != stuck || values != 1 || unwound.Load() != stuck {
		return fmt.Errorf("cancelled %d, values %d, unwound %d", cancelled, values, unwound.Load())
	}
	return nil
}

func testJoinSetDrop(c *co.Ctx) error {
	js := tasks.NewJoinSet[int]()
	tt := tasks.NewTaskTracker()
	var parked atomic.Int32
	for range 10 {
		js.Spawn(c, tasks.Track(tt, core.Future[int](co.Future(func(c *co.Ctx) int {
			parked.Add(1)
			co.Await(c, future.Pending[core.Unit]())
			return 0
		}))))
	}
	coUntil(c, func() bool { return parked.Load() == 10 })
	js.Drop()
	if js.Len() != 0 {
		return errors.New("a dropped set still holds tasks")
	}
	tt.Close()
	co.Await(c, core.Future[core.Unit](tt.Wait())) // every task ended
	late := js.Spawn(c, future.Ready(1))
	_, err := co.AwaitResult(c, late)
	if err != nil && !core.IsCancelled(err) {
		return err
	}
	return nil
}

func testCoPingPong(c *co.Ctx) error {
	pingTx, pingRx := mpsc.New[int](1)
	pongTx, pongRx := mpsc.New[int](1)
	ponger := co.Go(c, func(c *co.Ctx) error {
		for {
			v, err := co.AwaitResult(c, pingRx.Recv())
			if err != nil {
				pongTx.Close()
				return nil
			}
			if err := co.Await(c, core.Future[error](pongTx.Send(v))); err != nil {
				return err
			}
		}
	})
	for i := range 2000 {
		if err := co.Await(c, core.Future[error](pingTx.Send(i))); err != nil {
			return err
		}
		v, err := co.AwaitResult(c, pongRx.Recv())
		if err != nil || v != i {
			return fmt.Errorf("round trip %d: got %d, %v", i, v, err)
		}
	}
	pingTx.Close()
	return coJoin(c, ponger)
}

func testCoMany(c *co.Ctx) error {
	var n wsync.Notify
	const count = 2000
	var parked, done atomic.Int32
	for range count {
		co.Go(c, func(c *co.Ctx) int {
			f := n.Notified()
			parked.Add(1)
			co.Await(c, core.Future[core.Unit](f))
			done.Add(1)
			return 0
		})
	}
	coUntil(c, func() bool { return parked.Load() == count })
	n.NotifyWaiters()
	coUntil(c, func() bool { return done.Load() == count })
	return nil
}

func testCoAbort(c *co.Ctx) error {
	var unwound, after atomic.Bool
	var parked atomic.Bool
	h := co.Go(c, func(c *co.Ctx) int {
		defer unwound.Store(true)
		var n wsync.Notify
		f := n.Notified()
		parked.Store(true)
		co.Await(c, core.Future[core.Unit](f))
		after.Store(true)
		return 0
	})
	coUntil(c, parked.Load)
	h.Abort()
	if _, err := co.AwaitResult(c, h); !core.IsCancelled(err) {
		return fmt.Errorf("the aborted task ended with %v", err)
	}
	if !unwound.Load() || after.Load() {
		return errors.New("the aborted body was not unwound")
	}
	return nil
}

func testCoShutdown(t *testing.T, configure func(*rt.Builder)) {
	r := syncRuntime(t, configure)
	var unwound atomic.Int32
	const n = 50
	coRun(t, r, func(c *co.Ctx) error {
		var parked atomic.Int32
		for range n {
			co.Go(c, func(c *co.Ctx) int {
				defer unwound.Add(1)
				parked.Add(1)
				co.Await(c, future.Pending[core.Unit]())
				return 0
			})
		}
		coUntil(c, func() bool { return parked.Load() == n })
		return nil
	})
	require.NoError(t, r.Shutdown(hangLimit))
	require.Equal(t, int32(n), unwound.Load(), "every suspended body unwound")
}

// testTasksStress runs tokens, trackers and join sets together on every
// worker: groups of tasks in join sets, tracked, cancelled by a token tree
// half way, with the outcome checked exactly.
func testTasksStress(c *co.Ctx) error {
	const groups, per = 8, 64
	root := tasks.NewCancellationToken()
	tt := tasks.NewTaskTracker()
	var finished, cancelled atomic.Int32
	var hs []*core.JoinHandle[error]
	for g := range groups {
		tok := root.Child()
		hs = append(hs, tasks.Spawn(tt, c, core.Future[error](co.Future(func(c *co.Ctx) error {
			js := tasks.NewJoinSet[int]()
			defer js.Drop()
			for i := range per {
				js.Spawn(c, core.Future[int](co.Future(func(c *co.Ctx) int {
					if i%2 == 1 {
						// Odd tasks wait for the cancellation.
						co.Await(c, core.Future[core.Unit](tok.Cancelled()))
						return -1
					}
					for range (g + i) % 4 {
						c.Yield()
					}
					return i
				})))
			}
			got := 0
			for {
				res := co.Await(c, core.Future[tasks.JoinResult[int]](js.JoinNext()))
				if res.Empty {
					break
				}
				switch {
				case res.Err != nil:
					return res.Err
				case res.Value == -1:
					cancelled.Add(1)
				default:
					finished.Add(1)
				}
				got++
				if got == per/2 && g == 0 {
					// Group 0 cancels everyone once half its tasks joined.
					root.Cancel()
				}
			}
			if got != per {
				return fmt.Errorf("group %d joined %d of %d", g, got, per)
			}
			return nil
		}))))
	}
	// Group 0's even tasks end without the cancel, so its 32nd join
	// (the odd ones cannot end before the cancel) triggers it.
	tt.Close()
	for _, h := range hs {
		if err := coJoin(c, h); err != nil {
			return err
		}
	}
	co.Await(c, core.Future[core.Unit](tt.Wait()))
	if finished.Load() != groups*per/2 || cancelled.Load() != groups*per/2 {
		return fmt.Errorf("finished %d, cancelled %d", finished.Load(), cancelled.Load())
	}
	return nil
}

func testTasksNoLeak(t *testing.T, configure func(*rt.Builder)) {
	ignore := goleak.IgnoreCurrent()
	b := rt.NewBuilder().IgnoreEnv()
	if configure != nil {
		configure(b)
	}
	r, err := b.Build()
	require.NoError(t, err)
	coRun(t, r, func(c *co.Ctx) error {
		tok := tasks.NewCancellationToken()
		js := tasks.NewJoinSet[int]()
		for range 10 {
			js.Spawn(c, core.Future[int](co.Future(func(c *co.Ctx) int {
				co.Await(c, core.Future[core.Unit](tok.Cancelled()))
				return 0
			})))
		}
		co.Go(c, func(c *co.Ctx) int { // still suspended at shutdown
			co.Await(c, future.Pending[core.Unit]())
			return 0
		})
		c.Yield()
		tok.Cancel()
		co.Await(c, js.Shutdown())
		return nil
	})
	require.NoError(t, r.Close())
	co.ReleaseIdle()
	goleak.VerifyNone(t, ignore)
}
