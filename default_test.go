package weft_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
