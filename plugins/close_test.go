package plugins_test

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// sockets lists this process's descriptors that are sockets.
func sockets(t *testing.T) map[string]string {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		if strings.HasPrefix(target, "socket:") {
			out[e.Name()] = target
		}
	}
	return out
}

// Closing a driver plugin releases its connections to the process before
// Close returns. gRPC closes a connection with open streams (the
// session's, go-plugin's output streams) only once they end, and redials
// when the plugin's end closes first, both on goroutines of its own; a
// runtime built and shut down in a loop would otherwise find sockets of
// the last one still open. The race is short: the test repeats it.
func TestClosingADriverPluginReleasesItsConnectionsBeforeReturning(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("lists descriptors in /proc/self/fd")
	}
	for i := range 30 {
		before := sockets(t)
		drv, err := newDriver(t, epollBin, epollSum)
		require.NoError(t, err)
		require.NoError(t, drv.Close())
		for fd, target := range sockets(t) {
			require.Equal(t, before[fd], target, "round %d: descriptor %s is open after Close", i, fd)
		}
	}
}
