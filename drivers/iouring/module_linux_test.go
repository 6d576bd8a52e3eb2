//go:build linux

package iouring

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/rt"
	"github.com/weftrt/weft/drivers/epoll"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/wheel"
)

// refuseSetup makes io_uring_setup fail with errno until the test ends,
// as a seccomp filter or kernel.io_uring_disabled would.
func refuseSetup(t *testing.T, errno syscall.Errno) {
	f := func() error { return errno }
	setupHook.Store(&f)
	t.Cleanup(func() { setupHook.Store(nil) })
}

// captureFallbackLog records what the fallback logs until the test ends.
func captureFallbackLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, nil))
	fallbackLog = func() *slog.Logger { return l }
	t.Cleanup(func() { fallbackLog = slog.Default })
	return &buf
}

func buildModule(t *testing.T, fallback string) (any, error) {
	t.Helper()
	m, err := core.Lookup(core.KindDriver, Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.NewConfig().(*Config)
	cfg.Fallback = fallback
	return m.New(cfg, &core.DriverParams{Events: 64})
}

func TestWithoutIOUringTheDriverFallsBackToEpollAndSaysWhy(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.ENOSYS} {
		refuseSetup(t, errno)
		log := captureFallbackLog(t)
		d, err := buildModule(t, FallbackEpoll)
		if err != nil {
			t.Fatalf("%v: %v", errno, err)
		}
		ed, ok := d.(*epoll.Driver)
		if !ok {
			t.Fatalf("%v: built %T, want the epoll driver", errno, d)
		}
		ed.Close()
		msg := log.String()
		for _, want := range []string{"io_uring is unavailable", "epoll", errno.Error()} {
			if !strings.Contains(msg, want) {
				t.Errorf("%v: the start-up log lacks %q: %s", errno, want, msg)
			}
		}
	}
}

// The fallback is announced on the runtime's logger when the runtime hands
// one over (core.DriverParams.Log), not on slog's default.
func TestTheFallbackIsLoggedOnTheRuntimesLogger(t *testing.T) {
	refuseSetup(t, syscall.EPERM)
	def := captureFallbackLog(t)
	var buf bytes.Buffer
	m, err := core.Lookup(core.KindDriver, Name)
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.NewConfig().(*Config)
	cfg.Fallback = FallbackEpoll
	d, err := m.New(cfg, &core.DriverParams{Events: 64, Log: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	d.(*epoll.Driver).Close()
	if !strings.Contains(buf.String(), "io_uring is unavailable") {
		t.Errorf("the runtime's logger did not get the fallback: %q", buf.String())
	}
	if def.Len() != 0 {
		t.Errorf("the fallback went to the default logger too: %q", def.String())
	}
}

func TestWithoutIOUringAndFallbackErrorTheBuildFailsNamingTheCause(t *testing.T) {
	refuseSetup(t, syscall.EPERM)
	_, err := buildModule(t, FallbackError)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.EPERM) {
		t.Fatalf("error %v does not wrap ErrUnavailable and EPERM", err)
	}
	for _, want := range []string{"seccomp", "io_uring_disabled", `fallback is "error"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// Through the runtime builder, the build fails with it.
	_, err = rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver(Name).Set("driver.fallback", "error").Build()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("runtime build: %v", err)
	}
	refuseSetup(t, syscall.ENOSYS)
	_, err = buildModule(t, FallbackError)
	if !errors.Is(err, syscall.ENOSYS) || !strings.Contains(err.Error(), "no io_uring") {
		t.Fatalf("ENOSYS: %v", err)
	}
}

func TestAFallenBackRuntimeRuns(t *testing.T) {
	refuseSetup(t, syscall.EPERM)
	captureFallbackLog(t)
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver(Name).Build()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var kind string
	_, err = rt.BlockOn(r, core.PollFunc[int](func(cx *core.Context) (int, bool) {
		switch cx.Worker().Driver().(type) {
		case *epoll.Driver:
			kind = "epoll"
		case *Driver:
			kind = "iouring"
		}
		return 0, true
	}))
	if err != nil || kind != "epoll" {
		t.Fatalf("the runtime's driver is %q (%v), want epoll", kind, err)
	}
}

func TestBadConfigurationNamesTheKey(t *testing.T) {
	for key, val := range map[string]any{
		"driver.entries":     300,
		"driver.fallback":    "kqueue",
		"driver.sqpoll_idle": "-1s",
	} {
		_, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver(Name).Set(key, val).Build()
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%v: error %v does not name the key", key, val, err)
		}
	}
	_, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver(Name).Set("driver.ring_size", 8).Build()
	if err == nil || !strings.Contains(err.Error(), "driver.ring_size") {
		t.Errorf("an unknown key: %v", err)
	}
}

func TestShutdownLeavesNoGoroutine(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	for _, sched := range []string{"currentthread", "workstealing"} {
		b := rt.NewBuilder().IgnoreEnv().Scheduler(sched).Driver(Name).Set("driver.fallback", "error")
		if sched == "workstealing" {
			b.Workers(2)
		}
		r, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.BlockOn(r, core.PollFunc[int](func(cx *core.Context) (int, bool) {
			d := cx.Worker().Driver().(*Driver)
			h, _, err := d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{})
			if err == nil {
				pollOnce(d.Accept(h), cx.Waker()) // left pending at shutdown
			}
			return 0, true
		}))
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	goleak.VerifyNone(t, ignore)
}
