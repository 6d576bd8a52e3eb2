//go:build linux

package integration_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	_ "github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/percore"
	_ "github.com/weftrt/weft/timers/wheel"
)

// TestAPercorePoolWithEpollLeavesNoGoroutineAfterClose builds pools with an epoll
// driver per worker, runs I/O-free work on them and closes them: every
// worker goroutine, driver and timer is gone.
func TestAPercorePoolWithEpollLeavesNoGoroutineAfterClose(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	for _, n := range []int{1, 4} {
		r, err := rt.NewBuilder().IgnoreEnv().Scheduler(percore.Name).Workers(n).
			Driver("epoll").Timer("wheel").Build()
		require.NoError(t, err)
		for i := 0; i < 100; i++ {
			rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
				return core.Unit{}, false
			})))
		}
		v, err := rt.BlockOn(r, core.PollFunc[int](func(*core.Context) (int, bool) { return 3, true }))
		require.NoError(t, err)
		assert.Equal(t, 3, v)
		require.NoError(t, r.Close())
	}
	goleak.VerifyNone(t, ignore)
}
