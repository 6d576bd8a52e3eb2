package echo_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/tools/internal/echo"
)

// The workloads start this test binary again as their server; the child
// serves instead of running tests.
func TestMain(m *testing.M) {
	echo.ServeChildIfRequested()
	if os.Getenv(lowFDChildEnv) != "" {
		serveWithFewDescriptors()
	}
	os.Exit(m.Run())
}

func TestServeEchoesEveryConnectionUntilItsWriteSideCloses(t *testing.T) {
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver("epoll").Timer("wheel").Build()
	require.NoError(t, err)
	defer r.ShutdownBackground()
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	require.NoError(t, err)
	served := make(chan error, 1)
	go func() {
		serveErr, err := rt.BlockOn(r, echo.Serve(ln, 0))
		served <- errors.Join(serveErr, err)
	}()

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", ln.Addr().String())
			if !assert.NoError(t, err) {
				return
			}
			defer c.Close()
			msg := bytes.Repeat([]byte{byte(i)}, 100_000+i)
			go func() {
				c.Write(msg)
				c.(*net.TCPConn).CloseWrite()
			}()
			got, err := io.ReadAll(c)
			assert.NoError(t, err, "the server closes after echoing everything")
			assert.Equal(t, msg, got)
		}()
	}
	wg.Wait()

	require.NoError(t, ln.Close())
	select {
	case err := <-served:
		assert.ErrorIs(t, err, net.ErrClosed, "closing the listener ends Serve")
	case <-time.After(time.Minute):
		t.Fatal("Serve did not end when its listener closed")
	}
}

func TestW8RunsAgainstBothServers(t *testing.T) {
	for _, impl := range []echo.Impl{echo.Weft, echo.Go} {
		cfg := echo.W8Config{Conns: 3, RoundTrips: 100, MsgSize: 64}
		res, err := echo.RunW8(impl, cfg)
		require.NoError(t, err, impl)
		assert.Equal(t, 300, res.RoundTrips)
		assert.Positive(t, res.PerSecond)
		assert.LessOrEqual(t, res.P50, res.P99)
		assert.Positive(t, res.ServerCPU, "the child measured its CPU time")
		t.Log(res)
	}
}

func TestW9RunsAgainstBothServers(t *testing.T) {
	for _, impl := range []echo.Impl{echo.Weft, echo.Go, echo.GoCopy} {
		cfg := echo.W9Config{Conns: 2, Bytes: 1 << 20, Chunk: 16 << 10}
		res, err := echo.RunW9(impl, cfg)
		require.NoError(t, err, impl)
		assert.EqualValues(t, 2<<20, res.Bytes)
		assert.Positive(t, res.GBps)
		t.Log(res)
	}
}

func TestAWorkloadWithoutAServerChildSaysSo(t *testing.T) {
	_, err := echo.RunW8(echo.Weft, echo.W8Config{Conns: 1, RoundTrips: 1, MsgSize: 1, Server: echo.Server{Executable: "/bin/true"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ServeChildIfRequested")
}
