package blocking_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/blocking"
)

func TestSpawnRunsTheFunctionAndResolvesWithItsValue(t *testing.T) {
	p := newPool(t, blocking.Config{})
	h := blocking.Spawn(p, func() string { return "done" })
	v, err := await(h).Unwrap()
	require.NoError(t, err)
	require.Equal(t, "done", v)
}

func TestSpawnBlockingFuncRunsTheFunction(t *testing.T) {
	p := newPool(t, blocking.Config{})
	ran := make(chan struct{})
	require.NoError(t, p.SpawnBlockingFunc(func() { close(ran) }))
	<-ran
}

func TestSpawnBlockingFuncRejectsANilFunction(t *testing.T) {
	p := newPool(t, blocking.Config{})
	require.Error(t, p.SpawnBlockingFunc(nil))
	require.Zero(t, p.NumThreads())
}

func TestSpawnPanicsOnANilFunction(t *testing.T) {
	p := newPool(t, blocking.Config{})
	require.Panics(t, func() { blocking.Spawn[int](p, nil) })
}

func TestNewFillsInDefaultsForZeroFields(t *testing.T) {
	p := newPool(t, blocking.Config{})
	require.Equal(t, blocking.Config{
		MaxThreads: blocking.DefaultMaxThreads,
		KeepAlive:  blocking.DefaultKeepAlive,
		Name:       blocking.DefaultName,
	}, p.Config())
	require.Equal(t, 512, blocking.DefaultMaxThreads)
	require.Equal(t, 10*time.Second, blocking.DefaultKeepAlive)
}

func TestValidateNamesTheNegativeField(t *testing.T) {
	err := blocking.Config{MaxThreads: -1}.Validate()
	require.ErrorContains(t, err, "MaxThreads")
	err = blocking.Config{KeepAlive: -time.Second}.Validate()
	require.ErrorContains(t, err, "KeepAlive")
	require.NoError(t, blocking.Config{}.Validate())
	require.Panics(t, func() { blocking.New(blocking.Config{MaxThreads: -1}) })
}

func TestAPanickingJobResolvesWithAPanicJoinErrorAndItsGoroutineIsReused(t *testing.T) {
	p := newPool(t, blocking.Config{MaxThreads: 1, KeepAlive: time.Hour})
	_, err := await(blocking.Spawn(p, func() int { panic("boom") })).Unwrap()
	require.True(t, core.IsPanic(err))
	var je *core.JoinError
	require.True(t, errors.As(err, &je))
	require.Equal(t, "boom", je.PanicValue())
	require.NotEmpty(t, je.Stack())

	// The goroutine survived the panic and parked; the next job runs on it.
	eventually(t, "the goroutine is idle", func() bool { return p.IdleThreads() == 1 })
	require.Equal(t, 1, p.NumThreads())
	v, err := await(blocking.Spawn(p, func() int { return 7 })).Unwrap()
	require.NoError(t, err)
	require.Equal(t, 7, v)
	require.Equal(t, 1, p.NumThreads())
}

func TestAPanicInAFireAndForgetJobIsDiscardedAndItsGoroutineIsReused(t *testing.T) {
	p := newPool(t, blocking.Config{MaxThreads: 1, KeepAlive: time.Hour})
	require.NoError(t, p.SpawnBlockingFunc(func() { panic("boom") }))
	eventually(t, "the goroutine is idle", func() bool { return p.IdleThreads() == 1 })
	require.Equal(t, 1, p.NumThreads())
	require.Equal(t, 7, await(blocking.Spawn(p, func() int { return 7 })).Value)
}

func TestAJobBeyondMaxThreadsWaitsInTheQueueUntilAGoroutineIsFree(t *testing.T) {
	p := newPool(t, blocking.Config{MaxThreads: 2, KeepAlive: time.Hour})
	first, second := newGate(t), newGate(t)
	started := make(chan struct{}, 2)
	h1 := blocking.Spawn(p, first.job(started, 1))
	h2 := blocking.Spawn(p, second.job(started, 2))
	<-started
	<-started

	var ran atomic.Bool
	h3 := blocking.Spawn(p, func() int { ran.Store(true); return 3 })
	require.Equal(t, 1, p.QueueDepth())
	require.Equal(t, 2, p.NumThreads())
	require.Equal(t, 0, p.IdleThreads())
	require.False(t, ran.Load())

	first.open()
	require.Equal(t, 1, await(h1).Value)
	require.Equal(t, 3, await(h3).Value)
	require.Equal(t, 0, p.QueueDepth())
	require.Equal(t, 2, p.NumThreads())

	second.open()
	require.Equal(t, 2, await(h2).Value)
}

func TestSequentialJobsReuseOneIdleGoroutine(t *testing.T) {
	p := newPool(t, blocking.Config{KeepAlive: time.Hour})
	for i := range 10 {
		if i > 0 {
			eventually(t, "the goroutine is idle", func() bool { return p.IdleThreads() == 1 })
		}
		require.Equal(t, i, await(blocking.Spawn(p, func() int { return i })).Value)
		require.Equal(t, 1, p.NumThreads())
	}
}

func TestIdleGoroutinesExitWhenTheKeepAliveExpires(t *testing.T) {
	p := newPool(t, blocking.Config{KeepAlive: 20 * time.Millisecond})
	g := newGate(t)
	started := make(chan struct{}, 3)
	hs := []*core.JoinHandle[int]{
		blocking.Spawn(p, g.job(started, 0)),
		blocking.Spawn(p, g.job(started, 1)),
		blocking.Spawn(p, g.job(started, 2)),
	}
	for range hs {
		<-started
	}
	require.Equal(t, 3, p.NumThreads())
	g.open()
	for i, h := range hs {
		require.Equal(t, i, await(h).Value)
	}

	eventually(t, "every goroutine has exited", func() bool { return p.NumThreads() == 0 })
	require.Equal(t, 0, p.IdleThreads())

	// The pool starts a goroutine again for the next job.
	require.Equal(t, 9, await(blocking.Spawn(p, func() int { return 9 })).Value)
}

func TestAbortBeforeTheJobStartsPreventsIt(t *testing.T) {
	p := newPool(t, blocking.Config{MaxThreads: 1, KeepAlive: time.Hour})
	g := newGate(t)
	started := make(chan struct{}, 1)
	h1 := blocking.Spawn(p, g.job(started, 1))
	<-started

	var ran atomic.Bool
	h2 := blocking.Spawn(p, func() int { ran.Store(true); return 2 })
	require.Equal(t, 1, p.QueueDepth())
	h2.Abort()
	g.open()

	_, err := await(h2).Unwrap()
	require.True(t, core.IsCancelled(err))
	require.ErrorIs(t, err, core.ErrAborted)
	require.False(t, ran.Load())
	require.Equal(t, 1, await(h1).Value)
}

func TestAbortAfterTheJobStartedHasNoEffect(t *testing.T) {
	p := newPool(t, blocking.Config{})
	g := newGate(t)
	started := make(chan struct{}, 1)
	h := blocking.Spawn(p, g.job(started, 1))
	<-started
	h.Abort()
	g.open()
	v, err := await(h).Unwrap()
	require.NoError(t, err)
	require.Equal(t, 1, v)
}

func TestShutdownResolvesQueuedJobsCancelledWithErrShutdownWithoutRunningThem(t *testing.T) {
	p := newPool(t, blocking.Config{MaxThreads: 1, KeepAlive: time.Hour})
	g := newGate(t)
	started := make(chan struct{}, 1)
	running := blocking.Spawn(p, g.job(started, 1))
	<-started

	var ran atomic.Int32
	queued := make([]*core.JoinHandle[int], 3)
	for i := range queued {
		queued[i] = blocking.Spawn(p, func() int { ran.Add(1); return i })
	}
	require.Equal(t, 3, p.QueueDepth())

	require.False(t, p.Shutdown(0), "the running job holds its goroutine")
	require.Equal(t, 0, p.QueueDepth())
	for _, h := range queued {
		require.True(t, h.IsFinished(), "resolved before Shutdown returned")
		_, err := await(h).Unwrap()
		require.True(t, core.IsCancelled(err))
		require.ErrorIs(t, err, core.ErrShutdown)
	}
	require.Zero(t, ran.Load())

	g.open()
	require.Equal(t, 1, await(running).Value)
	require.True(t, p.Shutdown(-1))
	require.Equal(t, 0, p.NumThreads())
}

func TestShutdownReturnsFalseWhenARunningJobOutlastsTheTimeout(t *testing.T) {
	p := newPool(t, blocking.Config{})
	g := newGate(t)
	started := make(chan struct{}, 1)
	h := blocking.Spawn(p, g.job(started, 1))
	<-started

	require.False(t, p.Shutdown(10*time.Millisecond))
	require.False(t, h.IsFinished())
	require.Equal(t, 1, p.NumThreads())

	// The job was left running, not cancelled: it still delivers its value.
	g.open()
	require.True(t, p.Shutdown(-1))
	require.Equal(t, 1, await(h).Value)
}

func TestShutdownWaitsForARunningJobAndReportsTrueOnceItFinishes(t *testing.T) {
	for _, timeout := range []time.Duration{-1, time.Hour} {
		p := newPool(t, blocking.Config{})
		g := newGate(t)
		started := make(chan struct{}, 1)
		h := blocking.Spawn(p, g.job(started, 1))
		<-started

		result := make(chan bool)
		go func() { result <- p.Shutdown(timeout) }()
		g.open()
		require.True(t, <-result, "timeout %v", timeout)
		require.True(t, h.IsFinished(), "the job finished before Shutdown returned")
		require.Equal(t, 1, await(h).Value)
		require.Equal(t, 0, p.NumThreads())
	}
}

func TestShutdownStopsIdleGoroutinesWithoutWaitingForTheKeepAlive(t *testing.T) {
	p := newPool(t, blocking.Config{KeepAlive: time.Hour})
	require.Equal(t, 1, await(blocking.Spawn(p, func() int { return 1 })).Value)
	eventually(t, "the goroutine is idle", func() bool { return p.IdleThreads() == 1 })
	require.True(t, p.Shutdown(time.Minute))
	require.Equal(t, 0, p.NumThreads())
	require.Equal(t, 0, p.IdleThreads())
}

func TestSpawnAfterShutdownResolvesAtOnceCancelledWithErrShutdown(t *testing.T) {
	p := newPool(t, blocking.Config{Name: "files"})
	require.True(t, p.Shutdown(-1))

	var ran atomic.Bool
	h := blocking.Spawn(p, func() int { ran.Store(true); return 1 })
	require.True(t, h.IsFinished())
	r, ok := h.Poll(core.NewContext(nil))
	require.True(t, ok)
	require.True(t, core.IsCancelled(r.Err))
	require.ErrorIs(t, r.Err, core.ErrShutdown)

	err := p.SpawnBlockingFunc(func() { ran.Store(true) })
	require.ErrorIs(t, err, core.ErrShutdown)
	require.ErrorContains(t, err, `"files"`)

	require.False(t, ran.Load())
	require.Equal(t, 0, p.NumThreads())
	require.True(t, p.Shutdown(0), "Shutdown is idempotent")
}

func TestShutdownLeavesNoGoroutinesBehind(t *testing.T) {
	p := blocking.New(blocking.Config{MaxThreads: 3, KeepAlive: time.Hour})
	g := newGate(t)
	started := make(chan struct{}, 3)
	var hs []*core.JoinHandle[int]
	for i := range 3 {
		hs = append(hs, blocking.Spawn(p, g.job(started, i)))
	}
	for range 3 {
		<-started
	}
	hs = append(hs, blocking.Spawn(p, func() int { return 3 })) // queued
	go g.open()
	require.True(t, p.Shutdown(-1))
	for _, h := range hs {
		require.True(t, h.IsFinished())
	}
	goleak.VerifyNone(t)
}

// The scheduler a job is bound to has nothing to drive: its BlockOn only
// waits, for done or for the pool to shut down, and its Shutdown shuts the
// pool down.
func TestTheSchedulerOfAJobWaitsInBlockOnAndShutsThePoolDown(t *testing.T) {
	p := newPool(t, blocking.Config{})
	h := blocking.Spawn(p, func() int { return 1 })
	require.Equal(t, 1, await(h).Value)
	sched := h.Task().Scheduler()
	require.NotNil(t, sched)

	done := make(chan struct{})
	close(done)
	sched.BlockOn(h.Task(), done)

	returned := make(chan struct{})
	go func() {
		sched.BlockOn(h.Task(), make(chan struct{}))
		close(returned)
	}()
	sched.Shutdown()
	<-returned
	require.Equal(t, 0, p.NumThreads())
	_, err := await(blocking.Spawn(p, func() int { return 2 })).Unwrap()
	require.ErrorIs(t, err, core.ErrShutdown)
}
