package plugins_test

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

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

// Closing a driver plugin releases its connections to the process. gRPC
// closes a connection with open streams (the session's, go-plugin's output
// streams) only once they end, and redials when the plugin's end closes
// first, both on goroutines of its own; the host closes what it dialled
// when the process has ended, so no socket outlives the driver by more
// than an instant. A leaked one stays open: the check looks again for up
// to two seconds. The race is short, so the test repeats it.
func TestClosingADriverPluginReleasesItsConnections(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("lists descriptors in /proc/self/fd")
	}
	for i := range 30 {
		before := sockets(t)
		drv, err := newDriver(t, epollBin, epollSum)
		require.NoError(t, err)
		require.NoError(t, drv.Close())
		deadline := time.Now().Add(2 * time.Second)
		for {
			var open []string
			for fd, target := range sockets(t) {
				if before[fd] != target {
					open = append(open, fd+" -> "+target)
				}
			}
			if len(open) == 0 {
				break
			}
			require.True(t, time.Now().Before(deadline), "round %d: sockets %v still open 2s after Close", i, open)
			time.Sleep(10 * time.Millisecond)
		}
	}
}
