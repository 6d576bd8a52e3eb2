package tasks_test

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/tasks"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type countWaker struct{ n atomic.Int32 }

func (w *countWaker) Wake() { w.n.Add(1) }

func TestCancelWakesWaitersAndCancelsChildrenButNotParents(t *testing.T) {
	root := tasks.NewCancellationToken()
	child := root.Child()
	grand := child.Child()
	sibling := root.Child()

	w := &countWaker{}
	cx := core.NewContext(w)
	f := grand.Cancelled()
	_, ok := f.Poll(cx)
	require.False(t, ok)

	sibling.Cancel()
	assert.True(t, sibling.IsCancelled())
	assert.False(t, root.IsCancelled(), "a child does not cancel its parent")

	root.Cancel()
	assert.True(t, child.IsCancelled())
	assert.True(t, grand.IsCancelled())
	assert.Equal(t, int32(1), w.n.Load())
	_, ok = f.Poll(cx)
	assert.True(t, ok)
	assert.True(t, root.Child().IsCancelled(), "a child of a cancelled token starts cancelled")
}

func TestADroppedCancelledFutureIsNotWoken(t *testing.T) {
	tok := tasks.NewCancellationToken()
	w := &countWaker{}
	f := tok.Cancelled()
	_, ok := f.Poll(core.NewContext(w))
	require.False(t, ok)
	f.Drop()
	tok.Cancel()
	assert.Equal(t, int32(0), w.n.Load())
}

func TestDropGuardCancelsUnlessDisarmed(t *testing.T) {
	a, b := tasks.NewCancellationToken(), tasks.NewCancellationToken()
	ga, gb := a.DropGuard(), b.DropGuard()
	assert.Same(t, b, gb.Disarm())
	ga.Drop()
	gb.Drop()
	assert.True(t, a.IsCancelled())
	assert.False(t, b.IsCancelled())
}

func TestUnusedChildrenAreCollected(t *testing.T) {
	root := tasks.NewCancellationToken()
	for range 1000 {
		_ = root.Child()
	}
	kept := root.Child()
	for range 20 {
		runtime.GC()
	}
	// Nothing observable to count directly; cancelling still reaches the
	// live child, and the collected ones did not stop it.
	root.Cancel()
	assert.True(t, kept.IsCancelled())
}

// foreignCtx is a context of a type the context package does not know, so
// context.AfterFunc must start a goroutine to watch it.
type foreignCtx struct {
	context.Context
	done chan struct{}
}

func (c *foreignCtx) Done() <-chan struct{} { return c.done }
func (c *foreignCtx) Err() error {
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}

func TestFromContextCancelsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	tok := tasks.FromContext(ctx)
	assert.False(t, tok.IsCancelled())
	cancel()
	require.Eventually(t, tok.IsCancelled, 10*time.Second, time.Millisecond)

	assert.False(t, tasks.FromContext(context.Background()).IsCancelled())
	c2, cancel2 := context.WithCancel(context.Background())
	cancel2()
	assert.True(t, tasks.FromContext(c2).IsCancelled())
}

func TestFromContextLeavesNoGoroutineAfterCancelOrDrop(t *testing.T) {
	before := goleak.IgnoreCurrent()
	// Cancelled through the token: its watcher goroutine ends at once.
	fc := &foreignCtx{Context: context.Background(), done: make(chan struct{})}
	tok := tasks.FromContext(fc)
	tok.Cancel()
	require.NoError(t, goleak.Find(before))

	// Dropped: collected, and its registration (and goroutine) removed.
	fc2 := &foreignCtx{Context: context.Background(), done: make(chan struct{})}
	_ = tasks.FromContext(fc2)
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		if goleak.Find(before) == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, goleak.Find(before))
}

func TestTokenContextIsCancelledWithTheToken(t *testing.T) {
	tok := tasks.NewCancellationToken()
	ctx, release := tok.Context(context.Background())
	defer release()
	assert.NoError(t, ctx.Err())
	tok.Cancel()
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
}

func TestTrackerWaitResolvesWhenClosedAndEmpty(t *testing.T) {
	tt := tasks.NewTaskTracker()
	w := &countWaker{}
	cx := core.NewContext(w)
	f1 := tasks.Track(tt, future.Ready(1))
	f2 := tasks.Track(tt, future.Pending[int]())
	tok := tt.Token()
	assert.Equal(t, 3, tt.Len())

	wait := tt.Wait()
	_, ok := wait.Poll(cx)
	require.False(t, ok)
	_, _ = f1.Poll(cx)
	assert.Equal(t, 2, tt.Len())
	core.Drop(f2)
	tok.Release()
	tok.Release()
	assert.Equal(t, 0, tt.Len())
	_, ok = wait.Poll(cx)
	assert.False(t, ok, "not closed yet")
	assert.Equal(t, int32(0), w.n.Load())
	assert.True(t, tt.Close())
	assert.False(t, tt.Close())
	assert.Equal(t, int32(1), w.n.Load())
	_, ok = wait.Poll(cx)
	assert.True(t, ok)

	assert.True(t, tt.Reopen())
	_, ok = tt.Wait().Poll(cx)
	assert.False(t, ok, "reopened")
}

func TestJoinSetJoinsInFinishOrderByHand(t *testing.T) {
	// A JoinSet needs a Spawner; without a runtime the spawn is refused,
	// and the refused task joins as cancelled.
	js := tasks.NewJoinSet[int]()
	js.Spawn(core.NewContext(nil), future.Ready(1))
	assert.Equal(t, 1, js.Len())
	res, ok := js.TryJoinNext()
	require.True(t, ok)
	assert.True(t, core.IsCancelled(res.Err))
	assert.ErrorIs(t, res.Err, core.ErrNoRuntime)
	r, done := js.JoinNext().Poll(core.NewContext(nil))
	assert.True(t, done)
	assert.True(t, r.Empty)
}
