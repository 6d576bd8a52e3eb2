package config_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

// The registry is global and panics on duplicates, so the fake modules are
// registered once, here, under names no real module uses.

// schedConfig is the configuration of the fake "test-sched" scheduler: one
// field of every supported kind.
type schedConfig struct {
	Workers int           `koanf:"workers"`
	Pinned  bool          `koanf:"pinned"`
	Tick    time.Duration `koanf:"tick"`
	CPUs    []int         `koanf:"cpus"`
	Tags    []string      `koanf:"tags"`
	Ratio   float64       `koanf:"ratio"`
	Queue   queueConfig   `koanf:"queue"`
	// NotAKey has no tag, so it is not configurable.
	NotAKey string
}

type queueConfig struct {
	Depth     uint16 `koanf:"depth"`
	Policy    string `koanf:"policy"`
	LIFOLimit int8   `koanf:"lifo_limit"`
}

func (c *schedConfig) Validate() error {
	var errs []error
	if c.Workers < 1 {
		errs = append(errs, &core.ConfigError{Key: "workers", Problem: fmt.Sprintf("must be >= 1, got %d", c.Workers)})
	}
	if c.Queue.Policy != "fifo" && c.Queue.Policy != "lifo" {
		errs = append(errs, &core.ConfigError{Key: "queue.policy",
			Problem: fmt.Sprintf("unknown value %q", c.Queue.Policy), Valid: []string{"fifo", "lifo"}})
	}
	return errors.Join(errs...)
}

// otherSchedConfig belongs to "test-sched-other", whose keys differ from
// test-sched's.
type otherSchedConfig struct {
	LocalQueueSize int `koanf:"local_queue_size"`
}

// timerConfig's Validate returns a plain error, not a *core.ConfigError.
type timerConfig struct {
	Resolution time.Duration `koanf:"resolution"`
}

func (c *timerConfig) Validate() error {
	if c.Resolution <= 0 {
		return errors.New("resolution must be positive")
	}
	return nil
}

func newNothing(any, any) (any, error) { return nil, nil }

func init() {
	core.Register(core.Module{
		Kind: core.KindScheduler, Name: "test-sched", Doc: "a fake scheduler for tests",
		NewConfig: func() any {
			return &schedConfig{Workers: 2, Tick: time.Millisecond, Tags: []string{"a"}, Ratio: 0.5,
				Queue: queueConfig{Depth: 256, Policy: "fifo", LIFOLimit: 3}}
		},
		New: newNothing,
		// No module named "currentthread" is linked into this test: the
		// fake is the default scheduler.
		Rank: 1,
	})
	core.Register(core.Module{
		Kind: core.KindScheduler, Name: "test-sched-other", Doc: "another fake scheduler",
		NewConfig: func() any { return &otherSchedConfig{LocalQueueSize: 256} },
		New:       newNothing,
	})
	core.Register(core.Module{
		Kind: core.KindDriver, Name: "test-driver", Doc: "a fake driver without options",
		New: newNothing,
	})
	core.Register(core.Module{
		Kind: core.KindDriver, Name: "test-driver-elsewhere", Doc: "a fake driver for another system",
		NewConfig: func() any { return &otherSchedConfig{LocalQueueSize: 1} },
		Available: func() error { return errors.New("test-driver-elsewhere needs plan9") },
		New:       newNothing,
	})
	core.Register(core.Module{
		Kind: core.KindClock, Name: "test-broken-clock", Doc: "a clock whose NewConfig is wrong",
		NewConfig: func() any { return timerConfig{} }, // not a pointer
		New:       newNothing,
	})
	core.Register(core.Module{
		Kind: core.KindTimer, Name: "test-timer", Doc: "a fake timer",
		NewConfig: func() any { return &timerConfig{Resolution: time.Millisecond} },
		New:       newNothing,
	})
}

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// writeFile writes a configuration file into a fresh directory and returns
// its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

// problems flattens a load error into its *core.ConfigError values,
// failing the test on anything else.
func problems(t *testing.T, err error) []*core.ConfigError {
	t.Helper()
	require.Error(t, err)
	var out []*core.ConfigError
	var flatten func(error)
	flatten = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				flatten(e)
			}
			return
		}
		ce, ok := err.(*core.ConfigError)
		require.Truef(t, ok, "want a *core.ConfigError, got %T: %v", err, err)
		out = append(out, ce)
	}
	flatten(err)
	return out
}

// requireProblem asserts that err reports a problem at key whose message
// contains every one of want, and returns the message.
func requireProblem(t *testing.T, err error, key string, want ...string) string {
	t.Helper()
	var keys []string
	for _, p := range problems(t, err) {
		if p.Key == key {
			msg := p.Error()
			for _, w := range want {
				require.Contains(t, msg, w)
			}
			return msg
		}
		keys = append(keys, p.Key)
	}
	require.Failf(t, "no problem at key", "key %q; problems at %s:\n%v", key, strings.Join(keys, ", "), err)
	return ""
}

// captureLog returns a logger that writes text lines, without times, to
// the buffer returned with it.
func captureLog() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	h := slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})
	return slog.New(h), &buf
}

// mustLoad loads opts and fails the test on an error.
func mustLoad(t *testing.T, opts config.LoadOptions) *config.Composition {
	t.Helper()
	c, err := config.LoadWith(opts)
	require.NoError(t, err)
	require.NotNil(t, c)
	return c
}

// sched returns the fake scheduler's decoded configuration.
func sched(t *testing.T, c *config.Composition) *schedConfig {
	t.Helper()
	require.Equal(t, "test-sched", c.Scheduler.Name)
	cfg, ok := c.Scheduler.Config.(*schedConfig)
	require.Truef(t, ok, "scheduler config is %T", c.Scheduler.Config)
	return cfg
}
