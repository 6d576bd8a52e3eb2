package weft_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wnet"
)

// The default composition on Linux does I/O: a listener can be bound
// without configuring a driver.
func TestTheDefaultCompositionOnLinuxHasTheEpollDriver(t *testing.T) {
	r, err := weft.New()
	require.NoError(t, err)
	defer r.Close()
	require.Equal(t, "epoll", r.Composition().Driver.Name)
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	require.NoError(t, err)
	require.NoError(t, ln.Close())
}
