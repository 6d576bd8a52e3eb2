package weft_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
)

// names is a composition's module names, in the order of core.Kinds.
func names(c *config.Composition) [4]string {
	return [4]string{c.Driver.Name, c.Clock.Name, c.Timer.Name, c.Scheduler.Name}
}

// The builder of runtime/rt, which knows nothing of the facade, picks the
// same modules as weft.New: the default composition is declared where the
// modules register, not set by the facade.
func TestTheBuilderBuildsTheFacadesDefaultComposition(t *testing.T) {
	fromFacade, err := weft.New()
	require.NoError(t, err)
	defer fromFacade.Close()
	fromBuilder, err := rt.NewBuilder().Build()
	require.NoError(t, err)
	defer fromBuilder.Close()

	assert.Equal(t, names(fromFacade.Composition()), names(fromBuilder.Composition()))

	driver := config.None
	switch runtime.GOOS {
	case "linux":
		driver = "epoll"
	case "darwin", "freebsd", "netbsd", "openbsd":
		driver = "kqueue"
	}
	assert.Equal(t, [4]string{driver, "real", "wheel", "workstealing"}, names(fromBuilder.Composition()),
		"driver, clock, timer, scheduler")
}

// Main (and Run) leave no goroutine behind: the runtime's workers and the
// coroutines its bodies ran on are gone when it returns.
func TestMainLeavesNoGoroutineBehind(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	n, err := weft.Main(func(c *weft.Ctx) (int, error) {
		hs := make([]*weft.JoinHandle[int], 8)
		for i := range hs {
			hs[i] = weft.Go(c, func(c *weft.Ctx) int { c.Yield(); return i })
		}
		sum := 0
		for _, h := range hs {
			sum += weft.Await(c, h).Value
		}
		return sum, nil
	})
	require.NoError(t, err)
	assert.Equal(t, 28, n)
}
