package conformance

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/runtime/rt"
)

// schedulerBehaviour is one named behaviour of the scheduler suite.
type schedulerBehaviour struct {
	name string
	run  func(t *testing.T, f SchedulerFactory)
}

// SchedulerBehaviours returns the names of the behaviours Scheduler checks,
// in order.
func SchedulerBehaviours() []string {
	var names []string
	for _, b := range schedulerSuite {
		names = append(names, b.name)
	}
	return names
}

// Scheduler runs the scheduler conformance suite against schedulers built by
// f. Every behaviour is a subtest; each builds its own runtime.
func Scheduler(t *testing.T, f SchedulerFactory) {
	for _, b := range schedulerSuite {
		t.Run(b.name, func(t *testing.T) { b.run(t, f) })
	}
}

var schedulerSuite = []schedulerBehaviour{
	{"BlockOnReturnsTheRootValue", testBlockOnReturnsTheRootValue},
	{"BlockOnReportsARootPanicAsAJoinError", testBlockOnReportsARootPanic},
	{"SpawnedTaskRunsAndItsHandleYieldsTheValue", testSpawnFromTask},
	{"SpawnFromAForeignGoroutineRuns", testSpawnFromForeignGoroutine},
	{"NestedSpawnsAllComplete", testNestedSpawns},
	{"ChainedSpawnTenThousandDeepCompletes", testChainedSpawn},
	{"TenThousandTasksEachCompleteExactlyOnce", testManyTasks},
	{"AbortBeforeFirstPollNeverPollsAndDrops", testAbortBeforeFirstPoll},
	{"AbortWhileIdleDropsTheFuture", testAbortWhileIdle},
	{"AbortDuringPollCancelsWhenThePollReturns", testAbortDuringPoll},
	{"AbortAfterCompletionKeepsTheValue", testAbortAfterCompletion},
	{"AbortFromManyGoroutinesCancelsOnce", testAbortFromManyGoroutines},
	{"PanicIsRecoveredWithValueAndStack", testPanicRecovered},
	{"PanicInOneTaskDoesNotDisturbOthers", testPanicIsolated},
	{"YieldLetsOtherTasksRun", testYieldLetsOthersRun},
	{"BudgetForcesAYieldAfter128Units", testBudget},
	{"WakeFromAForeignGoroutineReschedules", testForeignWake},
	{"SelfWakeDuringPollIsNotLost", testSelfWakeDuringPoll},
	{"ForeignWakeDuringPollIsNotLost", testForeignWakeDuringPoll},
	{"TaskIsNeverPolledConcurrently", testNoConcurrentPoll},
	{"CompletedTaskIsNeverPolledAgain", testNoPollAfterComplete},
	{"JoinHandleCanBeAwaitedFromAnotherTask", testJoinFromAnotherTask},
	{"DroppingAJoinHandleDoesNotCancelTheTask", testDropJoinHandle},
	{"IsFinishedTurnsTrueOnCompletion", testIsFinished},
	{"TaskIDsAreUnique", testTaskIDs},
	{"SpawnAfterShutdownIsCancelled", testSpawnAfterShutdown},
	{"BlockOnAfterShutdownFails", testBlockOnAfterShutdown},
	{"ShutdownCancelsPendingTasksAndDropsTheirFutures", testShutdownCancelsPending},
	{"ShutdownDropsTasksThatNeverRan", testShutdownDropsQueued},
	{"WakeAfterShutdownIsHarmless", testWakeAfterShutdown},
	{"ShutdownFromInsideATaskStopsTheRuntime", testShutdownFromTask},
	{"TaskHooksSeeEverySpawnAndTermination", testTaskHooks},
	{"WorkerHooksRunAroundTheWorkersLife", testWorkerHooks},
	{"UnhandledPanicShutsDownWhenConfigured", testUnhandledPanicShutdown},
	{"APanicNobodyJoinsIsLoggedWithItsValueAndStack", testPanicIsLogged},
	{"IgnoreKeepsTaskPanicsOutOfTheLog", testPanicIgnored},
	{"CrashEndsTheProcessWithThePanicAndItsStack", testPanicCrashes},
	{"SpawnBlockingResultIsAwaitedFromATask", testSpawnBlocking},
	{"NoGoroutineIsLeftAfterClose", testNoLeak},
}

func testBlockOnReturnsTheRootValue(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	v, err := blockOn(t, r, ready(42))
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	// A second BlockOn on the same runtime works too.
	v, err = blockOn(t, r, ready(7))
	require.NoError(t, err)
	assert.Equal(t, 7, v)
}

func testBlockOnReportsARootPanic(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	_, err := blockOn(t, r, fn(func(*core.Context) (int, bool) { panic("root boom") }))
	require.Error(t, err)
	assert.True(t, core.IsPanic(err), "want a panic JoinError, got %v", err)
}

func testSpawnFromTask(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var h *core.JoinHandle[string]
	v, err := blockOn(t, r, seq(
		func(cx *core.Context) (string, bool) {
			h = core.Spawn(cx, ready("child"))
			return "", true
		},
		func(cx *core.Context) (string, bool) {
			res, ok := h.Poll(cx)
			return res.Value, ok
		},
	))
	require.NoError(t, err)
	assert.Equal(t, "child", v)
}

func testSpawnFromForeignGoroutine(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	gate := newProbe(0)
	var h *core.JoinHandle[int]
	var spawned atomic.Bool
	// The root waits on a probe that a foreign goroutine releases after it
	// spawned a task through the runtime handle.
	go func() {
		h = rt.Spawn(r.Handle(), ready(5))
		spawned.Store(true)
		gate.release()
	}()
	v, err := blockOn(t, r, seq(
		func(cx *core.Context) (int, bool) { return gate.Poll(cx) },
		func(cx *core.Context) (int, bool) {
			require.True(t, spawned.Load())
			res, ok := h.Poll(cx)
			return res.Value, ok
		},
	))
	require.NoError(t, err)
	assert.Equal(t, 5, v)
}

func testNestedSpawns(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var total atomic.Int64
	// Each task spawns `fan` children down to depth 0 and sums their
	// results plus one for itself.
	var node func(depth int) core.Future[int]
	node = func(depth int) core.Future[int] {
		var hs []*core.JoinHandle[int]
		var join *joinAll[int]
		return seq(
			func(cx *core.Context) (int, bool) {
				total.Add(1)
				if depth > 0 {
					for i := 0; i < 3; i++ {
						hs = append(hs, core.Spawn(cx, node(depth-1)))
					}
				}
				join = awaitAll(hs)
				return 0, true
			},
			func(cx *core.Context) (int, bool) {
				rs, ok := join.Poll(cx)
				if !ok {
					return 0, false
				}
				sum := 1
				for _, x := range rs {
					sum += x.Value
				}
				return sum, true
			},
		)
	}
	v, err := blockOn(t, r, node(5))
	require.NoError(t, err)
	// 1 + 3 + 9 + 27 + 81 + 243 tasks.
	assert.Equal(t, 364, v)
	assert.EqualValues(t, 364, total.Load())
}

func testChainedSpawn(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	const depth = 10000
	done := newProbe(depth)
	var link func(i int) core.Future[core.Unit]
	link = func(i int) core.Future[core.Unit] {
		return fn(func(cx *core.Context) (core.Unit, bool) {
			if i == depth {
				done.release()
			} else {
				core.Spawn(cx, link(i+1))
			}
			return core.Unit{}, true
		})
	}
	v, err := blockOn(t, r, seq(
		func(cx *core.Context) (int, bool) { core.Spawn(cx, link(1)); return 0, true },
		func(cx *core.Context) (int, bool) { return done.Poll(cx) },
	))
	require.NoError(t, err)
	assert.Equal(t, depth, v)
}

func testManyTasks(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	const n = 10000
	runs := make([]atomic.Int32, n)
	var hs []*core.JoinHandle[int]
	var join *joinAll[int]
	rs, err := blockOn(t, r, seq(
		func(cx *core.Context) ([]core.Result[int], bool) {
			for i := 0; i < n; i++ {
				i := i
				hs = append(hs, core.Spawn(cx, fn(func(*core.Context) (int, bool) {
					runs[i].Add(1)
					return i, true
				})))
			}
			join = awaitAll(hs)
			return nil, true
		},
		func(cx *core.Context) ([]core.Result[int], bool) { return join.Poll(cx) },
	))
	require.NoError(t, err)
	for i := 0; i < n; i++ {
		require.NoError(t, rs[i].Err)
		require.Equal(t, i, rs[i].Value)
		require.EqualValues(t, 1, runs[i].Load(), "task %d ran %d times", i, runs[i].Load())
	}
}

func testAbortBeforeFirstPoll(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(1)
	var h *core.JoinHandle[int]
	res, err := blockOn(t, r, seq(
		func(cx *core.Context) (core.Result[int], bool) {
			// Aborted before it is even handed to the scheduler, so no
			// worker can have polled it.
			task, handle := core.NewTask(core.Future[int](p))
			h = handle
			h.Abort()
			if err := cx.SpawnTask(task); err != nil {
				spi.Reject(task, err)
			}
			return core.Result[int]{}, true
		},
		func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) },
	))
	require.NoError(t, err)
	require.Error(t, res.Err)
	assert.True(t, core.IsCancelled(res.Err))
	assert.True(t, errors.Is(res.Err, core.ErrAborted), "got %v", res.Err)
	assert.EqualValues(t, 1, p.drops.Load(), "future dropped once")
	assert.EqualValues(t, 0, p.polls.Load(), "never polled")
	p.check(t)
}

func testAbortWhileIdle(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(1)
	var h *core.JoinHandle[int]
	res, err := blockOn(t, r, seq(
		func(cx *core.Context) (core.Result[int], bool) {
			h = core.Spawn(cx, core.Future[int](p))
			return core.Result[int]{}, true
		},
		// Wait until the task has been polled once and is idle.
		func(cx *core.Context) (core.Result[int], bool) {
			if p.polls.Load() == 0 {
				cx.Waker().Wake()
				return core.Result[int]{}, false
			}
			h.Abort()
			return core.Result[int]{}, true
		},
		func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) },
	))
	require.NoError(t, err)
	assert.True(t, core.IsCancelled(res.Err), "got %v", res.Err)
	assert.EqualValues(t, 1, p.drops.Load())
	assert.EqualValues(t, 1, p.polls.Load())
	p.check(t)
}

func testAbortDuringPoll(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(1)
	var h *core.JoinHandle[int]
	var self *core.JoinHandle[int]
	p.onPoll = func(*core.Context) {
		// Abort our own task while it is being polled.
		self.Abort()
	}
	res, err := blockOn(t, r, seq(
		func(cx *core.Context) (core.Result[int], bool) {
			task, hh := core.NewTask(core.Future[int](p))
			self, h = hh, hh
			if err := cx.SpawnTask(task); err != nil {
				spi.Reject(task, err)
			}
			return core.Result[int]{}, true
		},
		func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) },
	))
	require.NoError(t, err)
	assert.True(t, core.IsCancelled(res.Err), "got %v", res.Err)
	assert.EqualValues(t, 1, p.polls.Load(), "polled once, cancelled after that poll")
	assert.EqualValues(t, 1, p.drops.Load())
	p.check(t)
}

func testAbortAfterCompletion(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var h *core.JoinHandle[int]
	res, err := blockOn(t, r, seq(
		func(cx *core.Context) (core.Result[int], bool) {
			h = core.Spawn(cx, ready(9))
			return core.Result[int]{}, true
		},
		func(cx *core.Context) (core.Result[int], bool) {
			if !h.IsFinished() {
				cx.Waker().Wake()
				return core.Result[int]{}, false
			}
			h.Abort()
			return h.Poll(cx)
		},
	))
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.Equal(t, 9, res.Value)
}

func testAbortFromManyGoroutines(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	for round := 0; round < 50; round++ {
		p := newProbe(1)
		h := rt.Spawn(r.Handle(), core.Future[int](p))
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() { defer wg.Done(); h.Abort() }()
		}
		// Drive the runtime so the cancellation can run.
		_, err := blockOn(t, r, fn(func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) }))
		require.NoError(t, err)
		wg.Wait()
		res := waitFor(t, h)
		require.True(t, core.IsCancelled(res.Err))
		require.EqualValues(t, 1, p.drops.Load())
		p.check(t)
	}
}

func testPanicRecovered(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var h *core.JoinHandle[int]
	res, err := blockOn(t, r, seq(
		func(cx *core.Context) (core.Result[int], bool) {
			h = core.Spawn(cx, fn(func(*core.Context) (int, bool) { panicHere(); return 0, true }))
			return core.Result[int]{}, true
		},
		func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) },
	))
	require.NoError(t, err)
	var je *core.JoinError
	require.True(t, errors.As(res.Err, &je), "got %v", res.Err)
	assert.True(t, je.IsPanic())
	assert.False(t, je.IsCancelled())
	assert.Equal(t, "conformance panic value", je.PanicValue())
	assert.True(t, strings.Contains(string(je.Stack()), "panicHere"), "stack names the panicking function:\n%s", je.Stack())
}

func panicHere() { panic("conformance panic value") }

func testPanicIsolated(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var hs []*core.JoinHandle[int]
	var join *joinAll[int]
	rs, err := blockOn(t, r, seq(
		func(cx *core.Context) ([]core.Result[int], bool) {
			for i := 0; i < 20; i++ {
				i := i
				hs = append(hs, core.Spawn(cx, fn(func(*core.Context) (int, bool) {
					if i%2 == 0 {
						panic(fmt.Sprintf("task %d", i))
					}
					return i, true
				})))
			}
			join = awaitAll(hs)
			return nil, true
		},
		func(cx *core.Context) ([]core.Result[int], bool) { return join.Poll(cx) },
	))
	require.NoError(t, err)
	for i, res := range rs {
		if i%2 == 0 {
			assert.True(t, core.IsPanic(res.Err), "task %d", i)
		} else {
			assert.NoError(t, res.Err)
			assert.Equal(t, i, res.Value)
		}
	}
}

func testYieldLetsOthersRun(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var flag atomic.Bool
	var yields atomic.Int64
	spinner := func() core.Future[int] {
		var y core.Future[core.Unit]
		return fn(func(cx *core.Context) (int, bool) {
			for {
				if y != nil {
					if _, ok := y.Poll(cx); !ok {
						return 0, false
					}
					y = nil
				}
				if flag.Load() {
					return int(yields.Load()), true
				}
				yields.Add(1)
				y = core.Yield()
			}
		})
	}
	var hs []*core.JoinHandle[int]
	var join *joinAll[int]
	_, err := blockOn(t, r, seq(
		func(cx *core.Context) ([]core.Result[int], bool) {
			hs = append(hs, core.Spawn(cx, spinner()))
			hs = append(hs, core.Spawn(cx, fn(func(*core.Context) (int, bool) {
				flag.Store(true)
				return 0, true
			})))
			join = awaitAll(hs)
			return nil, true
		},
		func(cx *core.Context) ([]core.Result[int], bool) { return join.Poll(cx) },
	))
	require.NoError(t, err)
}

func testBudget(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var flag atomic.Bool
	var firstPollUnits atomic.Int64
	var polls atomic.Int64
	spinner := fn(func(cx *core.Context) (int, bool) {
		n := polls.Add(1)
		units := int64(0)
		for {
			if flag.Load() {
				return int(n), true
			}
			if !cx.Proceed() {
				if n == 1 {
					firstPollUnits.Store(units)
				}
				return 0, false
			}
			units++
		}
	})
	h := rt.Spawn(r.Handle(), spinner)
	res, err := blockOn(t, r, seq(
		func(cx *core.Context) (core.Result[int], bool) {
			core.Spawn(cx, fn(func(*core.Context) (int, bool) { flag.Store(true); return 0, true }))
			return core.Result[int]{}, true
		},
		func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) },
	))
	require.NoError(t, err)
	require.NoError(t, res.Err)
	if polls.Load() > 1 {
		// The spinner's first poll ran out of budget (on a
		// single-threaded scheduler it must have: the flag could only be
		// set after it yielded).
		assert.EqualValues(t, core.Budget, firstPollUnits.Load(), "a fresh poll gets exactly the budget")
	}
}

func testForeignWake(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(3)
	go func() {
		for p.polls.Load() == 0 {
			runtime.Gosched()
		}
		p.release()
	}()
	v, err := blockOn(t, r, core.Future[int](p))
	require.NoError(t, err)
	assert.Equal(t, 3, v)
	p.check(t)
}

func testSelfWakeDuringPoll(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var polls int
	v, err := blockOn(t, r, fn(func(cx *core.Context) (int, bool) {
		polls++
		if polls < 100 {
			// Wake ourselves while running, then return pending: the
			// scheduler must poll us again.
			cx.Waker().Wake()
			return 0, false
		}
		return polls, true
	}))
	require.NoError(t, err)
	assert.Equal(t, 100, v)
}

func testForeignWakeDuringPoll(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var polls int
	v, err := blockOn(t, r, fn(func(cx *core.Context) (int, bool) {
		polls++
		if polls < 20 {
			// Another goroutine wakes us while we are still inside Poll.
			w := cx.Waker()
			woke := make(chan struct{})
			go func() { w.Wake(); close(woke) }()
			<-woke
			return 0, false
		}
		return polls, true
	}))
	require.NoError(t, err)
	assert.Equal(t, 20, v)
}

func testNoConcurrentPoll(t *testing.T, f SchedulerFactory) {
	// Eight goroutines wake the probe's task over and over while its polls
	// are made long (each yields the thread a hundred times), so wakes land
	// during polls; the probe counts any poll that overlaps another. The
	// root waits for the probe's 50th poll on a waker, never spinning: a
	// self-waking root would keep a worker busy with no yield to Go's
	// scheduler, and under GOMAXPROCS=1 each of the probe's yields would
	// then wait for that worker's preemption (10ms), starving the probe.
	const wantPolls = 50
	r := newRuntime(t, f)
	p := newProbe(1)
	var stop atomic.Bool
	var root core.AtomicWaker
	var wakesDuringPolls atomic.Int64
	p.onPoll = func(*core.Context) {
		for i := 0; i < 100; i++ {
			runtime.Gosched()
		}
		if p.polls.Load() >= wantPolls {
			root.Wake()
		}
	}
	h := rt.Spawn(r.Handle(), core.Future[int](p))
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Bounded, but far more wakes than the 50 polls need.
			for i := 0; i < 1_000_000 && !stop.Load(); i++ {
				if w := p.waker.Take(); w != nil {
					p.waker.Register(w)
					if p.inPoll.Load() {
						wakesDuringPolls.Add(1)
					}
					w.Wake()
				}
				runtime.Gosched()
			}
		}()
	}
	saw := func() string {
		return fmt.Sprintf("the probe was polled %d times of %d, with %d wakes landing during a poll", p.polls.Load(), wantPolls, wakesDuringPolls.Load())
	}
	_, err := blockOnWatching(t, r, fn(func(cx *core.Context) (int, bool) {
		if p.polls.Load() < wantPolls {
			root.Register(cx.Waker())
			if p.polls.Load() < wantPolls {
				return 0, false
			}
		}
		p.release()
		return 0, true
	}), saw)
	require.NoError(t, err)
	stop.Store(true)
	wg.Wait()
	_, err = blockOnWatching(t, r, fn(func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) }), saw)
	require.NoError(t, err)
	p.check(t)
	// The behaviour proves something only if wakes raced with polls.
	require.Positive(t, wakesDuringPolls.Load(), "no wake landed during a poll, so concurrency was never exercised: %s", saw())
}

func testNoPollAfterComplete(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var polls atomic.Int64
	var waker core.Waker
	var h *core.JoinHandle[int]
	_, err := blockOn(t, r, seq(
		func(cx *core.Context) (int, bool) {
			h = core.Spawn(cx, fn(func(cx *core.Context) (int, bool) {
				polls.Add(1)
				waker = cx.Waker()
				return 1, true
			}))
			return 0, true
		},
		func(cx *core.Context) (int, bool) {
			res, ok := h.Poll(cx)
			return res.Value, ok
		},
	))
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				waker.Wake()
			}
		}()
	}
	wg.Wait()
	// Give the scheduler a chance to (wrongly) poll it again.
	_, err = blockOn(t, r, core.Yield())
	require.NoError(t, err)
	assert.EqualValues(t, 1, polls.Load())
}

func testJoinFromAnotherTask(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(11)
	var target *core.JoinHandle[int]
	var watcher *core.JoinHandle[int]
	v, err := blockOn(t, r, seq(
		func(cx *core.Context) (int, bool) {
			target = core.Spawn(cx, core.Future[int](p))
			watcher = core.Spawn(cx, fn(func(cx *core.Context) (int, bool) {
				res, ok := target.Poll(cx)
				return res.Value * 2, ok
			}))
			return 0, true
		},
		func(cx *core.Context) (int, bool) {
			if p.polls.Load() == 0 {
				cx.Waker().Wake()
				return 0, false
			}
			p.release()
			return 0, true
		},
		func(cx *core.Context) (int, bool) {
			res, ok := watcher.Poll(cx)
			return res.Value, ok
		},
	))
	require.NoError(t, err)
	assert.Equal(t, 22, v)
}

func testDropJoinHandle(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(1)
	ran := newProbe(1)
	_, err := blockOn(t, r, seq(
		func(cx *core.Context) (int, bool) {
			h := core.Spawn(cx, fn(func(cx *core.Context) (int, bool) {
				v, ok := p.Poll(cx)
				if ok {
					ran.release()
				}
				return v, ok
			}))
			h.Drop()
			return 0, true
		},
		func(cx *core.Context) (int, bool) {
			if p.polls.Load() == 0 {
				cx.Waker().Wake()
				return 0, false
			}
			p.release()
			return 0, true
		},
		func(cx *core.Context) (int, bool) { return ran.Poll(cx) },
	))
	require.NoError(t, err)
	assert.EqualValues(t, 0, p.drops.Load(), "the task ran to completion")
}

func testIsFinished(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(1)
	h := rt.Spawn(r.Handle(), core.Future[int](p))
	assert.False(t, h.IsFinished())
	p.release()
	res, err := blockOn(t, r, fn(func(cx *core.Context) (core.Result[int], bool) { return h.Poll(cx) }))
	require.NoError(t, err)
	require.NoError(t, res.Err)
	assert.True(t, h.IsFinished())
}

func testTaskIDs(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	seen := map[core.TaskID]bool{}
	for i := 0; i < 1000; i++ {
		h := rt.Spawn(r.Handle(), ready(i))
		require.NotZero(t, h.ID())
		require.False(t, seen[h.ID()], "duplicate task id %v", h.ID())
		seen[h.ID()] = true
	}
}

func testSpawnAfterShutdown(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	require.NoError(t, r.Shutdown(hangLimit))
	p := newProbe(1)
	h := rt.Spawn(r.Handle(), core.Future[int](p))
	res := waitFor(t, h)
	require.Error(t, res.Err)
	assert.True(t, core.IsCancelled(res.Err))
	assert.True(t, errors.Is(res.Err, core.ErrShutdown), "got %v", res.Err)
	assert.EqualValues(t, 0, p.polls.Load())
	assert.EqualValues(t, 1, p.drops.Load(), "the refused future is dropped")
}

func testBlockOnAfterShutdown(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	require.NoError(t, r.Shutdown(hangLimit))
	_, err := blockOn(t, r, ready(1))
	assert.ErrorIs(t, err, core.ErrShutdown)
}

func testShutdownCancelsPending(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	const n = 100
	probes := make([]*probe, n)
	hs := make([]*core.JoinHandle[int], n)
	for i := range probes {
		probes[i] = newProbe(i)
		hs[i] = rt.Spawn(r.Handle(), core.Future[int](probes[i]))
	}
	// Let every task be polled once so they are idle, not queued.
	_, err := blockOn(t, r, fn(func(cx *core.Context) (int, bool) {
		for _, p := range probes {
			if p.polls.Load() == 0 {
				cx.Waker().Wake()
				return 0, false
			}
		}
		return 0, true
	}))
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(hangLimit))
	for i, h := range hs {
		res := waitFor(t, h)
		require.True(t, core.IsCancelled(res.Err), "task %d: %v", i, res.Err)
		require.EqualValues(t, 1, probes[i].drops.Load(), "task %d dropped once", i)
		probes[i].check(t)
	}
	assert.Equal(t, 0, r.Tasks())
}

func testShutdownDropsQueued(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	const n = 100
	probes := make([]*probe, n)
	hs := make([]*core.JoinHandle[int], n)
	for i := range probes {
		probes[i] = newProbe(i)
		hs[i] = rt.Spawn(r.Handle(), core.Future[int](probes[i]))
	}
	require.NoError(t, r.Shutdown(hangLimit))
	for i, h := range hs {
		res := waitFor(t, h)
		require.True(t, core.IsCancelled(res.Err), "task %d: %v", i, res.Err)
		require.EqualValues(t, 1, probes[i].drops.Load(), "task %d dropped once", i)
		probes[i].check(t)
	}
}

func testWakeAfterShutdown(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	p := newProbe(1)
	var waker core.Waker
	p.onPoll = func(cx *core.Context) { waker = cx.Waker() }
	h := rt.Spawn(r.Handle(), core.Future[int](p))
	_, err := blockOn(t, r, fn(func(cx *core.Context) (int, bool) {
		if p.polls.Load() == 0 {
			cx.Waker().Wake()
			return 0, false
		}
		return 0, true
	}))
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(hangLimit))
	polls := p.polls.Load()
	for i := 0; i < 10; i++ {
		waker.Wake()
	}
	assert.Equal(t, polls, p.polls.Load())
	assert.True(t, core.IsCancelled(waitFor(t, h).Err))
}

func testShutdownFromTask(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	other := newProbe(1)
	rt.Spawn(r.Handle(), core.Future[int](other))
	_, err := blockOn(t, r, fn(func(cx *core.Context) (int, bool) {
		if other.polls.Load() == 0 {
			cx.Waker().Wake()
			return 0, false
		}
		r.ShutdownBackground()
		// Stay pending: the shutdown cancels us.
		return 0, false
	}))
	require.Error(t, err)
	// Shutting down again waits for the first shutdown to finish.
	r.ShutdownBackground()
	assert.True(t, errors.Is(err, core.ErrShutdown) || core.IsCancelled(err), "got %v", err)
	assert.EqualValues(t, 1, other.drops.Load())
}

func testTaskHooks(t *testing.T, f SchedulerFactory) {
	var spawned, terminated atomic.Int64
	var panicked atomic.Int64
	r := newRuntime(t, f, func(b *rt.Builder) {
		b.TaskHooks(core.TaskHooks{
			OnSpawn:     func(core.TaskID) { spawned.Add(1) },
			OnTerminate: func(core.TaskID) { terminated.Add(1) },
			OnPanic:     func(*core.JoinError) { panicked.Add(1) },
		})
	})
	var hs []*core.JoinHandle[int]
	var join *joinAll[int]
	_, err := blockOn(t, r, seq(
		func(cx *core.Context) ([]core.Result[int], bool) {
			for i := 0; i < 10; i++ {
				hs = append(hs, core.Spawn(cx, ready(i)))
			}
			hs = append(hs, core.Spawn(cx, fn(func(*core.Context) (int, bool) { panic("hooked") })))
			join = awaitAll(hs)
			return nil, true
		},
		func(cx *core.Context) ([]core.Result[int], bool) { return join.Poll(cx) },
	))
	require.NoError(t, err)
	// 11 children plus the root task.
	assert.EqualValues(t, 12, spawned.Load())
	assert.EqualValues(t, 12, terminated.Load())
	assert.EqualValues(t, 1, panicked.Load())
}

func testWorkerHooks(t *testing.T, f SchedulerFactory) {
	var started, stopped atomic.Int64
	r := newRuntime(t, f, func(b *rt.Builder) {
		b.WorkerHooks(core.WorkerHooks{
			AfterStart: func() { started.Add(1) },
			BeforeStop: func() { stopped.Add(1) },
		})
	})
	_, err := blockOn(t, r, ready(1))
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(hangLimit))
	assert.GreaterOrEqual(t, started.Load(), int64(1))
	assert.Equal(t, started.Load(), stopped.Load(), "every started worker stopped")
}

func testUnhandledPanicShutdown(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f, func(b *rt.Builder) { b.ShutdownOnPanic() })
	bystander := newProbe(1)
	_, err := blockOn(t, r, seq(
		func(cx *core.Context) (int, bool) {
			core.Spawn(cx, core.Future[int](bystander))
			core.Spawn(cx, fn(func(*core.Context) (int, bool) { panic("fatal") }))
			return 0, true
		},
		// Wait forever: the panic must end this BlockOn.
		func(cx *core.Context) (int, bool) { return 0, false },
	))
	require.Error(t, err)
	assert.ErrorIs(t, err, rt.ErrUnhandledPanic)
	assert.True(t, core.IsPanic(errors.Unwrap(errors.Unwrap(err))) || strings.Contains(err.Error(), "fatal"), "got %v", err)
	r.ShutdownBackground()
	assert.EqualValues(t, 1, bystander.drops.Load(), "other tasks are cancelled")
}

func testSpawnBlocking(t *testing.T, f SchedulerFactory) {
	r := newRuntime(t, f)
	var h *core.JoinHandle[int]
	v, err := blockOn(t, r, seq(
		func(cx *core.Context) (int, bool) {
			h = rt.SpawnBlocking(r.Handle(), func() int { return 99 })
			return 0, true
		},
		func(cx *core.Context) (int, bool) {
			res, ok := h.Poll(cx)
			return res.Value, ok
		},
	))
	require.NoError(t, err)
	assert.Equal(t, 99, v)
}

func testNoLeak(t *testing.T, f SchedulerFactory) {
	ignore := goleak.IgnoreCurrent()
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(f).Build()
	require.NoError(t, err)
	for i := 0; i < 100; i++ {
		rt.Spawn(r.Handle(), newProbe(i))
	}
	rt.SpawnBlocking(r.Handle(), func() int { return 1 })
	_, err = blockOn(t, r, ready(1))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	goleak.VerifyNone(t, ignore)
}
