//go:build linux

package iouring

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
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

// fakeFallback stands in for the epoll driver, which this module does not
// link: only its type and its Close matter to these tests (the embedded
// nil Driver panics on any other call).
type fakeFallback struct {
	core.Driver
	params core.DriverParams
	closed bool
}

func (f *fakeFallback) Close() error { f.closed = true; return nil }

// linkFakeFallback makes the fallback find a fake driver under the name
// "epoll" until the test ends, as if the program linked drivers/epoll.
func linkFakeFallback(t *testing.T) {
	fake := core.DriverModule(FallbackEpoll, "a stand-in for the epoll driver (tests only)", nil,
		func(_ struct{}, p core.DriverParams) (*fakeFallback, error) { return &fakeFallback{params: p}, nil })
	lookupFallback = func(kind core.Kind, name string) (core.Module, error) {
		if kind == core.KindDriver && name == FallbackEpoll {
			return fake, nil
		}
		return core.Lookup(kind, name)
	}
	t.Cleanup(func() { lookupFallback = core.Lookup })
}

// errDriverBuilt ends a runtime's build made by driverOnly once the driver
// is built.
var errDriverBuilt = errors.New("iouring test: the runtime built its driver")

// driverOnly returns a scheduler factory for rt.Builder.SchedulerFactory
// that builds the runtime's driver (a scheduler does so through
// SchedulerParams.NewDriver), stores it in *got, closes it and fails the
// build with its error or errDriverBuilt. The module links no scheduler,
// and the driver is all these tests need of a runtime.
func driverOnly(got *core.Driver) func(core.SchedulerParams) (core.Scheduler, error) {
	return func(p core.SchedulerParams) (core.Scheduler, error) {
		if p.NewDriver == nil {
			return nil, errors.New("iouring test: the runtime has no driver")
		}
		d, err := p.NewDriver()
		if err != nil {
			return nil, err
		}
		*got = d
		d.Close()
		return nil, errDriverBuilt
	}
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
	linkFakeFallback(t)
	for _, errno := range []syscall.Errno{syscall.EPERM, syscall.ENOSYS} {
		refuseSetup(t, errno)
		log := captureFallbackLog(t)
		d, err := buildModule(t, FallbackEpoll)
		if err != nil {
			t.Fatalf("%v: %v", errno, err)
		}
		fd, ok := d.(*fakeFallback)
		if !ok {
			t.Fatalf("%v: built %T, want the fallback driver", errno, d)
		}
		if fd.params.Events != 64 {
			t.Errorf("%v: the fallback got the parameters %+v, want those of the io_uring driver", errno, fd.params)
		}
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
	linkFakeFallback(t)
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
	if _, ok := d.(*fakeFallback); !ok {
		t.Fatalf("built %T, want the fallback driver", d)
	}
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
	_, err = rt.NewBuilder().IgnoreEnv().SchedulerFactory(driverOnly(new(core.Driver))).Driver(Name).Set("driver.fallback", "error").Build()
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("runtime build: %v", err)
	}
	refuseSetup(t, syscall.ENOSYS)
	_, err = buildModule(t, FallbackError)
	if !errors.Is(err, syscall.ENOSYS) || !strings.Contains(err.Error(), "no io_uring") {
		t.Fatalf("ENOSYS: %v", err)
	}
}

// The module does not link the epoll driver: a program that links neither
// it nor the weft facade and whose kernel refuses io_uring gets an error
// naming driver.fallback and the import that would link epoll.
func TestAFallbackThatIsNotLinkedNamesTheKeyAndTheImport(t *testing.T) {
	if _, err := core.Lookup(core.KindDriver, FallbackEpoll); err == nil {
		t.Fatal("the iouring module's tests link the epoll driver; they must not")
	}
	refuseSetup(t, syscall.EPERM)
	_, err := buildModule(t, FallbackEpoll)
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, syscall.EPERM) {
		t.Fatalf("error %v does not wrap ErrUnavailable and EPERM", err)
	}
	var unknown *core.UnknownModuleError
	if !errors.As(err, &unknown) || unknown.Name != FallbackEpoll {
		t.Fatalf("error %v does not wrap the registry's unknown-module error for %q", err, FallbackEpoll)
	}
	// Through the runtime builder, at the section's key.
	_, err = rt.NewBuilder().IgnoreEnv().SchedulerFactory(driverOnly(new(core.Driver))).Driver(Name).Build()
	if err == nil {
		t.Fatal("a runtime built with io_uring refused and no fallback linked")
	}
	for _, want := range []string{"driver.fallback", `"epoll"`, EpollImport, `"error"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// A runtime whose io_uring is refused hands its scheduler the fallback
// driver, and says so on the runtime's logger. (Tasks running on the epoll
// driver are what its suites in the integration module check.)
func TestARuntimeWithIOUringRefusedHandsItsSchedulerTheFallback(t *testing.T) {
	linkFakeFallback(t)
	refuseSetup(t, syscall.EPERM)
	var logged bytes.Buffer
	var got core.Driver
	_, err := rt.NewBuilder().IgnoreEnv().Logger(slog.New(slog.NewTextHandler(&logged, nil))).
		SchedulerFactory(driverOnly(&got)).Driver(Name).Build()
	if !errors.Is(err, errDriverBuilt) {
		t.Fatalf("build: %v", err)
	}
	if fd, ok := got.(*fakeFallback); !ok || !fd.closed {
		t.Fatalf("the scheduler got %T, want the fallback driver", got)
	}
	if !strings.Contains(logged.String(), "io_uring is unavailable") {
		t.Errorf("the runtime's logger did not get the fallback: %q", logged.String())
	}
}

func TestBadConfigurationNamesTheKey(t *testing.T) {
	for key, val := range map[string]any{
		"driver.entries":     300,
		"driver.fallback":    "kqueue",
		"driver.sqpoll_idle": "-1s",
	} {
		_, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(driverOnly(new(core.Driver))).Driver(Name).Set(key, val).Composition()
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=%v: error %v does not name the key", key, val, err)
		}
	}
	_, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(driverOnly(new(core.Driver))).Driver(Name).Set("driver.ring_size", 8).Composition()
	if err == nil || !strings.Contains(err.Error(), "driver.ring_size") {
		t.Errorf("an unknown key: %v", err)
	}
}
