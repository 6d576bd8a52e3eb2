package plugins_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/rt"
)

// pluginRuntime builds a runtime whose driver is the epoll plugin,
// restarting after a crash within milliseconds.
func pluginRuntime(t *testing.T, sched string) *rt.Runtime {
	t.Helper()
	b := rt.NewBuilder().IgnoreEnv().Scheduler(sched).Timer("wheel").Driver("plugin").
		Set("driver.path", epollBin).Set("driver.sha256", epollSum).
		Set("driver.restart.backoff", "1ms").Set("driver.restart.max_backoff", "4ms")
	if sched == "workstealing" {
		b.Workers(2)
	}
	r, err := b.Build()
	require.NoError(t, err)
	return r
}

// waitRunning waits until the driver has a live process.
func waitRunning(t *testing.T, d *plugins.Driver) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, ok := d.Info(); ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the plugin was not restarted within 20s")
		}
		time.Sleep(time.Millisecond)
	}
}

// crashError checks that err is the failure of an operation pending when
// the plugin was killed: it names the plugin and matches ErrPluginExited.
func crashError(what string, err error) error {
	var pe *plugins.Error
	switch {
	case err == nil:
		return fmt.Errorf("%s: succeeded although the plugin was killed", what)
	case !errors.Is(err, plugins.ErrPluginExited) || !errors.As(err, &pe) || pe.Plugin != "epoll-driver":
		return fmt.Errorf("%s: got %v, want an error naming the plugin and matching ErrPluginExited", what, err)
	}
	return nil
}

// One hundred times: connections with reads, an accept and writes pending
// in the plugin; the plugin is killed; every pending operation must fail
// with an error naming the plugin, at once, and the same runtime must work
// with the restarted process.
func TestKillingThePluginUnderLoadFailsPendingOperationsAndTheRuntimeRecovers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// 100 kills, as the acceptance asks; -short runs 20 (each restart
	// is a process start and two P-521 key generations, which the race
	// detector slows down).
	kills, pairs := 100, 4
	if testing.Short() {
		kills = 20
	}
	r := pluginRuntime(t, "workstealing")
	defer r.Close()
	var drv *plugins.Driver
	failed := 0
	for i := range kills {
		if drv != nil {
			waitRunning(t, drv)
		}
		err := run(t, r, 20*time.Second, func(c *co) error {
			drv = c.cx.Worker().Driver().(*plugins.Driver)
			ln, err := wnet.ListenTCP(c.cx, "tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			var streams []*wnet.TCPStream
			for range pairs {
				cl, err := awaitR(c, wnet.DialTCP("tcp", ln.Addr().String()))
				if err != nil {
					return err
				}
				sv, err := awaitR(c, ln.Accept())
				if err != nil {
					return err
				}
				streams = append(streams, cl, sv)
			}
			// Load: every stream has a read pending, half of them a
			// large write still being written (the peer reads nothing),
			// and the listener an accept.
			var pending []core.Future[core.Result[int]]
			big := make([]byte, 256<<10)
			for j, s := range streams {
				pending = append(pending, s.Read(make([]byte, 64)))
				if j%2 == 0 {
					for range 2 {
						if _, err := awaitR(c, s.Write(big)); err != nil {
							return err
						}
					}
				}
			}
			accept := ln.Accept()
			for _, f := range pending {
				if _, ok := f.Poll(c.cx); ok {
					return errors.New("a read with no data resolved at once")
				}
			}
			if _, ok := accept.Poll(c.cx); ok {
				return errors.New("an accept nobody dialled resolved at once")
			}
			if err := drv.KillProcess(); err != nil {
				return err
			}
			for j, f := range pending {
				if _, err := awaitR(c, f); crashError(fmt.Sprintf("read %d", j), err) != nil {
					return crashError(fmt.Sprintf("read %d", j), err)
				}
				failed++
			}
			if _, err := awaitR(c, accept); crashError("accept", err) != nil {
				return crashError("accept", err)
			}
			failed++
			// The process's handles are gone with it.
			if _, err := awaitR(c, streams[1].Read(make([]byte, 8))); !errors.Is(err, plugins.ErrPluginExited) && !errors.Is(err, plugins.ErrPluginUnavailable) {
				return fmt.Errorf("a read on a handle of the killed process: %v", err)
			}
			for _, s := range streams {
				_ = s.Close()
			}
			_ = ln.Close()
			return nil
		})
		require.NoError(t, err, "kill %d", i)
	}
	t.Logf("%d operations failed as they should across %d kills", failed, kills)

	// The runtime is healthy: the restarted plugin echoes.
	waitRunning(t, drv)
	require.Equal(t, kills, drv.Restarts())
	err := run(t, r, 20*time.Second, func(c *co) error {
		ln, err := wnet.ListenTCP(c.cx, "tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		cl, err := awaitR(c, wnet.DialTCP("tcp", ln.Addr().String()))
		if err != nil {
			return err
		}
		defer cl.Close()
		sv, err := awaitR(c, ln.Accept())
		if err != nil {
			return err
		}
		defer sv.Close()
		if _, err := awaitR(c, wio.WriteAll(cl, []byte("still alive"))); err != nil {
			return err
		}
		got := make([]byte, 11)
		if _, err := awaitR(c, wio.ReadFull(sv, got)); err != nil {
			return err
		}
		if string(got) != "still alive" {
			return fmt.Errorf("echoed %q", got)
		}
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, r.Shutdown(10*time.Second))
}
