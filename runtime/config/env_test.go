package config_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/runtime/config"
)

func TestTheEnvironmentOverridesTheFile(t *testing.T) {
	path := writeFile(t, "weft.yaml", "runtime: {name: fromfile}\nscheduler: {workers: 8, pinned: true}\n")
	c := mustLoad(t, config.LoadOptions{Path: path, Environ: []string{
		"WEFT_SCHEDULER_WORKERS=4",
		"WEFT_RUNTIME_NAME=fromenv",
	}})
	assert.Equal(t, "fromenv", c.Runtime.Name)
	assert.Equal(t, 4, sched(t, c).Workers)
	assert.True(t, sched(t, c).Pinned, "a key the environment does not set keeps the file's value")
}

func TestEnvironmentVariablesNameKeysThatContainUnderscores(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{Environ: []string{
		"WEFT_RUNTIME_BLOCKING_MAX_THREADS=64",
		"WEFT_RUNTIME_BLOCKING_KEEP_ALIVE=90s",
		"WEFT_RUNTIME_SHUTDOWN_TIMEOUT=1500ms",
		"WEFT_RUNTIME_UNHANDLED_PANIC=shutdown_runtime",
		"WEFT_RUNTIME_EVENT_BUFFER=16",
		"WEFT_SCHEDULER_QUEUE_LIFO_LIMIT=2",
		"WEFT_SCHEDULER_PINNED=true",
		"WEFT_SCHEDULER_RATIO=0.25",
		"WEFT_SCHEDULER_TAGS=x, y",
		"WEFT_SCHEDULER_CPUS=1,3",
		"WEFT_SCHEDULER_TICK=5ms",
	}})
	assert.Equal(t, 64, c.Runtime.Blocking.MaxThreads)
	assert.Equal(t, 90*time.Second, c.Runtime.Blocking.KeepAlive)
	assert.Equal(t, 1500*time.Millisecond, c.Runtime.ShutdownTimeout)
	assert.Equal(t, config.UnhandledPanicShutdownRuntime, c.Runtime.UnhandledPanic)
	assert.Equal(t, 16, c.Runtime.EventBuffer)
	cfg := sched(t, c)
	assert.Equal(t, int8(2), cfg.Queue.LIFOLimit)
	assert.True(t, cfg.Pinned)
	assert.Equal(t, 0.25, cfg.Ratio)
	assert.Equal(t, []string{"x", "y"}, cfg.Tags, "a list is comma-separated")
	assert.Equal(t, []int{1, 3}, cfg.CPUs)
	assert.Equal(t, 5*time.Millisecond, cfg.Tick)
}

func TestTheEnvironmentKindIsResolvedBeforeTheModuleKeys(t *testing.T) {
	path := writeFile(t, "weft.toml", "[scheduler]\nkind = \"test-sched\"\n")
	c := mustLoad(t, config.LoadOptions{Path: path, Environ: []string{
		"WEFT_SCHEDULER_KIND=test-sched-other",
		"WEFT_SCHEDULER_LOCAL_QUEUE_SIZE=64",
		"WEFT_TIMER_KIND=test-timer",
		"WEFT_TIMER_RESOLUTION=10ms",
	}})
	assert.Equal(t, "test-sched-other", c.Scheduler.Name)
	assert.Equal(t, &otherSchedConfig{LocalQueueSize: 64}, c.Scheduler.Config)
	assert.Equal(t, &timerConfig{Resolution: 10 * time.Millisecond}, c.Timer.Config)
}

// A WEFT_ variable that names no key may belong to another program or
// another version of weft: loading ignores it with a warning naming the
// closest valid variable, and does not fail.
func TestAnUnknownEnvironmentVariableIsIgnoredWithAWarningNamingTheClosest(t *testing.T) {
	log, out := captureLog()
	c, err := config.LoadWith(config.LoadOptions{Log: log, Environ: []string{
		"WEFT_SCHEDULER_WOKERS=4",
		"WEFT_RUNTIME_KIND=fast",
		"WEFT_DRIVER_DEPTH=2",
		"WEFT_HOME=/opt/weft",
		"WEFT_SCHEDULER_WORKERS=5",
	}})
	require.NoError(t, err)
	assert.Equal(t, 5, sched(t, c).Workers, "the known variables still apply")
	lines := splitLines(strings.TrimSpace(out.String()))
	require.Len(t, lines, 4, out.String())
	for i, want := range [][]string{
		{"level=WARN", "ignoring environment variable WEFT_DRIVER_DEPTH", `driver \"none\" has no such key`,
			"variable=WEFT_DRIVER_DEPTH", "closest=WEFT_DRIVER_KIND"},
		{"ignoring environment variable WEFT_HOME", "it names no section", "variable=WEFT_HOME", "closest="},
		{"ignoring environment variable WEFT_RUNTIME_KIND", "the runtime section has no such key",
			"closest=WEFT_RUNTIME_NAME"},
		{"ignoring environment variable WEFT_SCHEDULER_WOKERS", `scheduler \"test-sched\" has no such key`,
			"the closest valid variable is WEFT_SCHEDULER_WORKERS", "closest=WEFT_SCHEDULER_WORKERS"},
	} {
		for _, w := range want {
			assert.Contains(t, lines[i], w)
		}
	}
}

// Without a logger, the warning goes to slog's default logger.
func TestTheWarningGoesToTheDefaultLoggerWithoutOne(t *testing.T) {
	log, out := captureLog()
	defer func(old *slog.Logger) { slog.SetDefault(old) }(slog.Default())
	slog.SetDefault(log)
	mustLoad(t, config.LoadOptions{Environ: []string{"WEFT_HOME=/opt/weft"}})
	assert.Contains(t, out.String(), "variable=WEFT_HOME")
}

func TestABadEnvironmentValueNamesItsVariable(t *testing.T) {
	_, err := config.LoadWith(config.LoadOptions{Environ: []string{
		"WEFT_SCHEDULER_WORKERS=many",
		"WEFT_SCHEDULER_QUEUE_POLICY=random",
		"WEFT_RUNTIME_EVENT_BUFFER=0",
	}})
	requireProblem(t, err, "scheduler.workers", `want an integer, got string "many" (from WEFT_SCHEDULER_WORKERS)`)
	requireProblem(t, err, "scheduler.queue.policy", `unknown value "random" (from WEFT_SCHEDULER_QUEUE_POLICY) (valid: fifo, lifo)`)
	requireProblem(t, err, "runtime.event_buffer", "must be >= 1, got 0 (from WEFT_RUNTIME_EVENT_BUFFER)")
}

func TestAnUnknownKindFromTheEnvironmentHidesTheKeysOfItsSection(t *testing.T) {
	_, err := config.LoadWith(config.LoadOptions{Environ: []string{
		"WEFT_SCHEDULER_KIND=workstealing",
		"WEFT_SCHEDULER_WORKERS=4",
	}})
	requireProblem(t, err, "scheduler.kind", `unknown scheduler "workstealing" (from WEFT_SCHEDULER_KIND)`)
	assert.Len(t, problems(t, err), 1, "WEFT_SCHEDULER_WORKERS may belong to the module meant")
}

func TestOnlyWeftVariablesAreRead(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{Environ: []string{
		"HOME=/root", "WEFTLESS=1", "weft_scheduler_workers=9", "PATH=/bin", "NOEQUALS",
	}})
	assert.Equal(t, 2, sched(t, c).Workers)
}

func TestOverridesWinOverTheEnvironment(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{
		Environ: []string{"WEFT_SCHEDULER_WORKERS=4", "WEFT_RUNTIME_NAME=env"},
		Overrides: map[string]any{
			"scheduler.workers":        6,
			"scheduler.tags":           []string{"go"},
			"runtime.shutdown_timeout": 2 * time.Second,
			"runtime":                  map[string]any{"blocking": map[string]any{"max_threads": 8}},
		},
	})
	assert.Equal(t, "env", c.Runtime.Name)
	assert.Equal(t, 6, sched(t, c).Workers)
	assert.Equal(t, []string{"go"}, sched(t, c).Tags)
	assert.Equal(t, 2*time.Second, c.Runtime.ShutdownTimeout)
	assert.Equal(t, 8, c.Runtime.Blocking.MaxThreads)
}

func TestOverridesMayChooseTheModule(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{
		Environ:   []string{"WEFT_SCHEDULER_KIND=test-sched", "WEFT_SCHEDULER_LOCAL_QUEUE_SIZE=32"},
		Overrides: map[string]any{"scheduler.kind": "test-sched-other"},
	})
	assert.Equal(t, &otherSchedConfig{LocalQueueSize: 32}, c.Scheduler.Config)
}

func TestBadOverridesAreReportedLikeTheFile(t *testing.T) {
	_, err := config.LoadWith(config.LoadOptions{Overrides: map[string]any{
		"scheduler.workers": "lots",
		"scheduler.wokers":  1,
		"sheduler.kind":     "test-sched",
	}})
	requireProblem(t, err, "scheduler.workers", `want an integer, got string "lots" (from overrides)`)
	requireProblem(t, err, "scheduler.wokers", "unknown key (from overrides) (valid: cpus, kind,")
	requireProblem(t, err, "sheduler", "unknown section")
	require.Len(t, problems(t, err), 3)
}

func TestADisabledSectionFromTheEnvironmentSaysSoAtItsKeys(t *testing.T) {
	path := writeFile(t, "weft.yaml", "driver: {kind: test-driver-elsewhere, local_queue_size: 4}\n")
	_, err := config.LoadWith(config.LoadOptions{Path: path, Environ: []string{"WEFT_DRIVER_KIND=none"}})
	requireProblem(t, err, "driver.local_queue_size", "unknown key", `(driver.kind is "none", set by WEFT_DRIVER_KIND)`)
	assert.Len(t, problems(t, err), 1)
}
