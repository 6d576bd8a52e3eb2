package config_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

func TestLoadWithoutAFileGivesTheDefaults(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{})

	assert.Equal(t, config.DefaultRuntime(), c.Runtime)
	assert.Equal(t, "weft", c.Runtime.Name)
	assert.Equal(t, config.UnhandledPanicLog, c.Runtime.UnhandledPanic)
	assert.Equal(t, 10*time.Second, c.Runtime.ShutdownTimeout)
	assert.Equal(t, 1024, c.Runtime.EventBuffer)
	assert.Equal(t, 512, c.Runtime.Blocking.MaxThreads)
	assert.Equal(t, 10*time.Second, c.Runtime.Blocking.KeepAlive)

	assert.Equal(t, config.None, c.Driver.Name)
	assert.Equal(t, core.Module{}, c.Driver.Module)
	assert.Nil(t, c.Driver.Config)
	assert.Equal(t, config.None, c.Timer.Name)
	assert.Equal(t, "real", c.Clock.Name)
	assert.Equal(t, core.KindClock, c.Clock.Module.Kind)
	assert.Nil(t, c.Clock.Config, "the real clock takes no configuration")

	cfg := sched(t, c)
	assert.Equal(t, 2, cfg.Workers, "a module's defaults come from its NewConfig")
	assert.Equal(t, "fifo", cfg.Queue.Policy)
}

// rankedDriver is a driver known to one load only, with a default rank
// and an availability.
func rankedDriver(name string, rank int, available error) core.Module {
	return core.DriverModule(name, "a fake ranked driver", nil,
		func(struct{}, core.DriverParams) (core.Driver, error) { return nil, errors.New("not built") },
		core.DefaultRank(rank), core.AvailableWhen(func() error { return available }))
}

func TestWithNoKindNamedTheHighestRankedModuleIsSelected(t *testing.T) {
	other := core.SchedulerModule("test-sched-ranked", "a fake scheduler of higher rank", nil,
		func(struct{}, core.SchedulerParams) (core.Scheduler, error) { return nil, errors.New("not built") },
		core.DefaultRank(2))
	c := mustLoad(t, config.LoadOptions{Modules: []core.Module{other, rankedDriver("test-driver-ranked", 1, nil)}})
	assert.Equal(t, "test-sched-ranked", c.Scheduler.Name, "rank 2 over test-sched's rank 1")
	assert.Equal(t, "test-driver-ranked", c.Driver.Name, "a ranked driver over none")
}

func TestAnUnavailableTopRankedModuleFallsToTheNext(t *testing.T) {
	mods := []core.Module{
		rankedDriver("test-driver-top", 30, errors.New("test-driver-top needs plan9")),
		rankedDriver("test-driver-next", 20, nil),
	}
	c := mustLoad(t, config.LoadOptions{Modules: mods})
	assert.Equal(t, "test-driver-next", c.Driver.Name)

	// Asked for by name, the unavailable one is still an error at
	// driver.kind.
	_, err := config.LoadWith(config.LoadOptions{Modules: mods, Overrides: map[string]any{"driver.kind": "test-driver-top"}})
	requireProblem(t, err, "driver.kind", `driver "test-driver-top" is not available on this system: test-driver-top needs plan9`,
		"(valid: test-driver, test-driver-next, none)")
}

func TestWithoutARankedSchedulerTheSchedulerKindMustBeNamed(t *testing.T) {
	// The load's unranked module hides the registered test-sched of rank 1.
	unranked := core.SchedulerModule("test-sched", "test-sched without a rank", nil,
		func(struct{}, core.SchedulerParams) (core.Scheduler, error) { return nil, errors.New("not built") })
	_, err := config.LoadWith(config.LoadOptions{Modules: []core.Module{unranked}})
	requireProblem(t, err, "scheduler.kind", "none of the scheduler modules linked is a default on this system; name one",
		"valid: test-sched, test-sched-other")

	c := mustLoad(t, config.LoadOptions{Modules: []core.Module{unranked}, Overrides: map[string]any{"scheduler.kind": "test-sched-other"}})
	assert.Equal(t, "test-sched-other", c.Scheduler.Name)
}

func TestLoadReadsYAMLTOMLAndJSONFiles(t *testing.T) {
	files := map[string]string{
		"weft.yaml": `
runtime:
  name: edge
  unhandled_panic: shutdown_runtime
  shutdown_timeout: 3s
  blocking: {max_threads: 64, keep_alive: 1m}
driver: {kind: test-driver}
timer: {kind: test-timer, resolution: 5ms}
scheduler:
  kind: test-sched
  workers: 8
  pinned: true
  cpus: [0, 2]
  tags: [fast, local]
  ratio: 0.75
  queue: {depth: 512, policy: lifo}
`,
		"weft.yml": `
runtime: {name: edge, unhandled_panic: shutdown_runtime, shutdown_timeout: 3s, blocking: {max_threads: 64, keep_alive: 1m}}
driver: {kind: test-driver}
timer: {kind: test-timer, resolution: 5ms}
scheduler: {kind: test-sched, workers: 8, pinned: true, cpus: [0, 2], tags: [fast, local], ratio: 0.75, queue: {depth: 512, policy: lifo}}
`,
		"weft.toml": `
[runtime]
name = "edge"
unhandled_panic = "shutdown_runtime"
shutdown_timeout = "3s"
[runtime.blocking]
max_threads = 64
keep_alive = "1m"
[driver]
kind = "test-driver"
[timer]
kind = "test-timer"
resolution = "5ms"
[scheduler]
kind = "test-sched"
workers = 8
pinned = true
cpus = [0, 2]
tags = ["fast", "local"]
ratio = 0.75
[scheduler.queue]
depth = 512
policy = "lifo"
`,
		"weft.json": `{
  "runtime": {"name": "edge", "unhandled_panic": "shutdown_runtime", "shutdown_timeout": "3s",
              "blocking": {"max_threads": 64, "keep_alive": "1m"}},
  "driver": {"kind": "test-driver"},
  "timer": {"kind": "test-timer", "resolution": "5ms"},
  "scheduler": {"kind": "test-sched", "workers": 8, "pinned": true, "cpus": [0, 2],
                "tags": ["fast", "local"], "ratio": 0.75, "queue": {"depth": 512, "policy": "lifo"}}
}`,
	}
	for name, content := range files {
		t.Run(name, func(t *testing.T) {
			c, err := config.Load(writeFile(t, name, content))
			require.NoError(t, err)

			assert.Equal(t, "edge", c.Runtime.Name)
			assert.Equal(t, config.UnhandledPanicShutdownRuntime, c.Runtime.UnhandledPanic)
			assert.Equal(t, 3*time.Second, c.Runtime.ShutdownTimeout)
			assert.Equal(t, 1024, c.Runtime.EventBuffer, "a key the file leaves out keeps its default")
			assert.Equal(t, 64, c.Runtime.Blocking.MaxThreads)
			assert.Equal(t, time.Minute, c.Runtime.Blocking.KeepAlive)

			assert.Equal(t, "test-driver", c.Driver.Name)
			assert.Nil(t, c.Driver.Config)
			assert.Equal(t, &timerConfig{Resolution: 5 * time.Millisecond}, c.Timer.Config)
			assert.Equal(t, &schedConfig{
				Workers: 8, Pinned: true, Tick: time.Millisecond, CPUs: []int{0, 2},
				Tags: []string{"fast", "local"}, Ratio: 0.75,
				Queue: queueConfig{Depth: 512, Policy: "lifo", LIFOLimit: 3},
			}, sched(t, c))
		})
	}
}

func TestAnEmptyFileGivesTheDefaults(t *testing.T) {
	for _, name := range []string{"empty.yaml", "empty.toml"} {
		c, err := config.LoadWith(config.LoadOptions{Path: writeFile(t, name, "")})
		require.NoError(t, err, name)
		assert.Equal(t, config.DefaultRuntime(), c.Runtime)
	}
}

func TestNullValuesKeepTheDefaults(t *testing.T) {
	path := writeFile(t, "weft.yaml", "runtime:\n  name: ~\nscheduler:\n  kind:\n  workers: null\ndriver:\n")
	c := mustLoad(t, config.LoadOptions{Path: path})
	assert.Equal(t, "weft", c.Runtime.Name)
	assert.Equal(t, 2, sched(t, c).Workers)
	assert.Equal(t, config.None, c.Driver.Name)
}

func TestMalformedFilesNameTheFileAndTheParserMessage(t *testing.T) {
	cases := map[string]struct{ content, want string }{
		"bad.yaml": {"scheduler:\n  kind: test-sched\n workers: [1\n", "yaml: line"},
		"bad.toml": {"[scheduler]\nkind = \n", "line 2, column"},
		"bad.json": {"{\n  \"scheduler\": {\"kind\" \"x\"}\n}", "line 2, column 24: invalid character"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, name, tc.content)
			c, err := config.Load(path)
			require.Error(t, err)
			assert.Nil(t, c)
			var fe *config.FileError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, path, fe.Path)
			assert.Contains(t, err.Error(), `weft: config file "`+path+`": malformed`)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestAMissingFileIsAClearError(t *testing.T) {
	path := t.TempDir() + "/absent.yaml"
	_, err := config.Load(path)
	require.Error(t, err)
	assert.True(t, errors.Is(err, fs.ErrNotExist))
	assert.Equal(t, `weft: config file "`+path+`": no such file`, err.Error())
}

func TestAnUnsupportedExtensionIsRejected(t *testing.T) {
	path := writeFile(t, "weft.ini", "[scheduler]\nkind=test-sched\n")
	_, err := config.Load(path)
	var fe *config.FileError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), `unsupported file extension ".ini" (valid: .json, .toml, .yaml, .yml)`)

	_, err = config.Load(writeFile(t, "weftrc", "scheduler: {}\n"))
	assert.Contains(t, err.Error(), "no file extension to tell the format by (valid: .json")
}

func TestAnUnknownSchedulerKindIsNamedWithTheRegisteredKinds(t *testing.T) {
	path := writeFile(t, "weft.yaml", "scheduler: {kind: workstealer, workers: 4}\n")
	_, err := config.Load(path)
	msg := requireProblem(t, err, "scheduler.kind", `unknown scheduler "workstealer"`,
		"valid: test-sched, test-sched-other")
	assert.NotContains(t, msg, "none", "a runtime always needs a scheduler")
	assert.Len(t, problems(t, err), 1, "the keys of an unknown module are not checked")
}

func TestNoneIsAllowedForDriverAndTimerOnly(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{Overrides: map[string]any{"driver.kind": "none", "timer.kind": "none"}})
	assert.Equal(t, config.None, c.Driver.Name)
	assert.Equal(t, config.None, c.Timer.Name)

	_, err := config.LoadWith(config.LoadOptions{Overrides: map[string]any{"clock.kind": "none", "scheduler.kind": "none"}})
	requireProblem(t, err, "clock.kind", `a runtime needs a clock; "none" is allowed for driver and timer only`, "valid: real")
	requireProblem(t, err, "scheduler.kind", "a runtime needs a scheduler")

	_, err = config.LoadWith(config.LoadOptions{Overrides: map[string]any{"driver.kind": "epol"}})
	requireProblem(t, err, "driver.kind", `unknown driver "epol"`, "(valid: test-driver, none)")
}

func TestAModuleWhoseNewConfigIsNotAStructPointerIsReported(t *testing.T) {
	_, err := config.LoadWith(config.LoadOptions{Overrides: map[string]any{"clock.kind": "test-broken-clock"}})
	requireProblem(t, err, "clock", `clock "test-broken-clock": NewConfig returned config_test.timerConfig, want a non-nil pointer to a struct`)
}

func TestAKindMustBeAString(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", "scheduler: {kind: 7}\n"))
	requireProblem(t, err, "scheduler.kind", "want a string, got integer 7")
}

func TestAModuleWithoutOptionsAcceptsOnlyItsKind(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", "driver: {kind: test-driver, depth: 3}\ntimer: {kind: none, wheel: 1}\n"))
	requireProblem(t, err, "driver.depth", "unknown key (valid: kind)")
	requireProblem(t, err, "timer.wheel", "unknown key (valid: kind)")
}

func TestModuleValidateRejectsZeroAndNegativeWorkers(t *testing.T) {
	for _, n := range []string{"0", "-3"} {
		_, err := config.Load(writeFile(t, "weft.yaml", "scheduler: {kind: test-sched, workers: "+n+"}\n"))
		msg := requireProblem(t, err, "scheduler.workers", "must be >= 1, got "+n)
		assert.Equal(t, `weft: config key "scheduler.workers": must be >= 1, got `+n, msg)
	}
}

func TestModuleValidateKeysAreNestedUnderTheSection(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", "scheduler: {queue: {policy: random}}\n"))
	requireProblem(t, err, "scheduler.queue.policy", `unknown value "random"`, "(valid: fifo, lifo)")
}

func TestAPlainValidateErrorIsReportedAtTheSection(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", "timer: {kind: test-timer, resolution: 0s}\n"))
	requireProblem(t, err, "timer", "resolution must be positive")
}

func TestAnUnknownKeyListsTheValidKeysOfItsSection(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml",
		"scheduler: {wokers: 4, queue: {dept: 1}}\nruntime: {blocking: {max_thread: 2}, nme: x}\n"))
	assert.Equal(t,
		`weft: config key "scheduler.wokers": unknown key (valid: cpus, kind, pinned, queue, ratio, tags, tick, workers)`,
		requireProblem(t, err, "scheduler.wokers"))
	requireProblem(t, err, "scheduler.queue.dept", "unknown key (valid: depth, lifo_limit, policy)")
	requireProblem(t, err, "runtime.blocking.max_thread", "unknown key (valid: keep_alive, max_threads)")
	requireProblem(t, err, "runtime.nme", "(valid: blocking, event_buffer, name, shutdown_timeout, unhandled_panic)")
}

func TestAWrongTypeNamesTheExpectedAndTheGivenType(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", `
runtime: {name: 42, shutdown_timeout: soon, blocking: 3}
scheduler:
  workers: many
  pinned: maybe
  ratio: [1]
  tags: fast
  cpus: [0, x]
  queue: {depth: -1, lifo_limit: 300}
`))
	requireProblem(t, err, "scheduler.workers", `want an integer, got string "many"`)
	requireProblem(t, err, "scheduler.pinned", `want a boolean, got string "maybe"`)
	requireProblem(t, err, "scheduler.ratio", "want a number, got a list of 1 items")
	requireProblem(t, err, "scheduler.cpus[1]", `want an integer, got string "x"`)
	requireProblem(t, err, "scheduler.queue.depth", "want a non-negative integer, got integer -1")
	requireProblem(t, err, "scheduler.queue.lifo_limit", "want an integer between -128 and 127, got integer 300")
	requireProblem(t, err, "runtime.name", "want a string, got integer 42")
	requireProblem(t, err, "runtime.shutdown_timeout", `want a duration such as 250ms, 10s or 1h30m, got string "soon"`)
	requireProblem(t, err, "runtime.blocking", "want a table, got integer 3")
	// A bare string is a one-item list, as from the environment.
	for _, p := range problems(t, err) {
		assert.NotEqual(t, "scheduler.tags", p.Key)
	}
}

func TestAFractionalNumberIsNotAnInteger(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.json", `{"scheduler": {"workers": 2.5}}`))
	requireProblem(t, err, "scheduler.workers", "want an integer, got number 2.5")
}

func TestRuntimeValuesAreValidated(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", `
runtime:
  name: ""
  unhandled_panic: explode
  shutdown_timeout: -1s
  event_buffer: 0
  blocking: {max_threads: -2, keep_alive: 0s}
`))
	requireProblem(t, err, "runtime.name", "must not be empty")
	requireProblem(t, err, "runtime.unhandled_panic", `unknown value "explode" (valid: log, ignore, shutdown_runtime, crash)`)
	requireProblem(t, err, "runtime.shutdown_timeout", "must be >= 0, got -1s")
	requireProblem(t, err, "runtime.event_buffer", "must be >= 1, got 0")
	requireProblem(t, err, "runtime.blocking.max_threads", "must be >= 1, got -2")
	requireProblem(t, err, "runtime.blocking.keep_alive", "must be > 0, got 0s")
}

func TestAnUnknownTopLevelSectionIsAnError(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", "schedular: {kind: test-sched}\nscheduler: 3\n"))
	requireProblem(t, err, "schedular", "unknown section (valid: clock, driver, runtime, scheduler, timer)")
	requireProblem(t, err, "scheduler", "want a table of keys, got integer 3")
}

func TestEveryProblemIsReportedTogether(t *testing.T) {
	path := writeFile(t, "weft.yaml", `
runtime: {event_buffer: 0, colour: blue}
driver: {kind: epoll}
scheduler: {workers: 0, wokers: 1}
`)
	log, out := captureLog()
	_, err := config.LoadWith(config.LoadOptions{Path: path, Environ: []string{"WEFT_TIMER_FOO=1"}, Log: log})
	var keys []string
	for _, p := range problems(t, err) {
		keys = append(keys, p.Key)
	}
	assert.ElementsMatch(t, []string{
		"runtime.colour", "runtime.event_buffer", "driver.kind",
		"scheduler.wokers", "scheduler.workers",
	}, keys)
	assert.Contains(t, out.String(), "variable=WEFT_TIMER_FOO", "an unknown variable is a warning, not a problem")
	// One problem per line, as weft config check prints them.
	assert.Len(t, splitLines(err.Error()), len(keys))
}

func TestTheCompositionIsAFreshSnapshotEachLoad(t *testing.T) {
	a := mustLoad(t, config.LoadOptions{})
	b := mustLoad(t, config.LoadOptions{})
	sched(t, a).Workers = 99
	assert.Equal(t, 2, sched(t, b).Workers)
	assert.Equal(t, 2, sched(t, mustLoad(t, config.LoadOptions{})).Workers)
}

func TestSelectionReturnsTheSectionOfEachKind(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{})
	for _, kind := range core.Kinds {
		sel := c.Selection(kind)
		if sel.Name != config.None {
			assert.Equal(t, kind, sel.Module.Kind)
		}
	}
	assert.Equal(t, "real", c.Selection(core.KindClock).Name)
	assert.Panics(t, func() { c.Selection("gpu") })
}

func splitLines(s string) []string {
	var lines []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			lines = append(lines, s[start:i])
			start = i + 1
		}
	}
	return append(lines, s[start:])
}

func TestADurationWithoutAUnitIsAnErrorThatShowsTheUnits(t *testing.T) {
	const units = "which has no unit (the units are ns, us, ms, s, m and h)"
	for name, content := range map[string]string{
		"weft.yaml": "runtime: {shutdown_timeout: 5, blocking: {keep_alive: 2.5}}\n",
		"weft.toml": "[runtime]\nshutdown_timeout = 5\n[runtime.blocking]\nkeep_alive = 2.5\n",
		"weft.json": `{"runtime": {"shutdown_timeout": 5, "blocking": {"keep_alive": 2.5}}}`,
	} {
		_, err := config.Load(writeFile(t, name, content))
		requireProblem(t, err, "runtime.shutdown_timeout", "want a duration with a unit, such as 250ms, 10s or 1h30m, got ", " 5, "+units)
		requireProblem(t, err, "runtime.blocking.keep_alive", "got number 2.5, "+units)
	}
	_, err := config.LoadWith(config.LoadOptions{Environ: []string{"WEFT_RUNTIME_SHUTDOWN_TIMEOUT=5"}})
	requireProblem(t, err, "runtime.shutdown_timeout", `got string "5", `+units, "(from WEFT_RUNTIME_SHUTDOWN_TIMEOUT)")
	_, err = config.LoadWith(config.LoadOptions{Overrides: map[string]any{"runtime.shutdown_timeout": 5}})
	requireProblem(t, err, "runtime.shutdown_timeout", "got integer 5, "+units)

	// Zero is zero in every unit.
	c := mustLoad(t, config.LoadOptions{Path: writeFile(t, "weft.yaml", "runtime: {shutdown_timeout: 0}\n")})
	assert.Equal(t, time.Duration(0), c.Runtime.ShutdownTimeout)
}

func TestRuntimeCountsAreBoundedByWhatTheMachineServes(t *testing.T) {
	_, err := config.Load(writeFile(t, "weft.yaml", "runtime: {event_buffer: 1000000000, blocking: {max_threads: 1000000000}}\n"))
	requireProblem(t, err, "runtime.event_buffer", "must be at most 65536", "only costs memory", "got 1000000000")
	requireProblem(t, err, "runtime.blocking.max_threads", "must be at most 8192", "10000", "got 1000000000")
	c := mustLoad(t, config.LoadOptions{Overrides: map[string]any{
		"runtime.event_buffer":         config.MaxEventBuffer,
		"runtime.blocking.max_threads": config.MaxBlockingThreads,
	}})
	assert.Equal(t, config.MaxEventBuffer, c.Runtime.EventBuffer)
}

// A problem in a section whose kind an environment variable chose says so:
// the keys were checked against the module the environment named, not the
// one the file names.
func TestAProblemInASectionWhoseKindTheEnvironmentChoseSaysSo(t *testing.T) {
	path := writeFile(t, "weft.yaml", "scheduler: {kind: test-sched, workers: 4}\ntimer: {kind: test-timer, resolution: 0s}\n")
	_, err := config.LoadWith(config.LoadOptions{Path: path, Environ: []string{"WEFT_SCHEDULER_KIND=test-sched-other"}})
	requireProblem(t, err, "scheduler.workers", "unknown key",
		`(scheduler.kind is "test-sched-other", set by WEFT_SCHEDULER_KIND)`)
	msg := requireProblem(t, err, "timer", "resolution must be positive")
	assert.NotContains(t, msg, "set by", "the timer's kind came from the file")

	// The note is for the environment only: overrides are the program's
	// own choice, and the kind's own problem already says where it came
	// from.
	_, err = config.LoadWith(config.LoadOptions{Path: path, Environ: []string{"WEFT_SCHEDULER_KIND=test-sched-other"},
		Overrides: map[string]any{"scheduler.kind": "test-sched-other"}})
	assert.NotContains(t, requireProblem(t, err, "scheduler.workers", "unknown key"), "set by")
	_, err = config.LoadWith(config.LoadOptions{Environ: []string{"WEFT_SCHEDULER_KIND=nope"}})
	assert.Equal(t, `weft: config key "scheduler.kind": unknown scheduler "nope" (from WEFT_SCHEDULER_KIND) (valid: test-sched, test-sched-other)`,
		requireProblem(t, err, "scheduler.kind"))
}

// A module that cannot be built on this system is a problem at its
// section's kind, found when the configuration is checked rather than
// when the runtime is built; the section's keys are still checked.
func TestAModuleUnavailableOnThisSystemIsAProblemAtItsKind(t *testing.T) {
	_, err := config.LoadWith(config.LoadOptions{Overrides: map[string]any{
		"driver.kind": "test-driver-elsewhere", "driver.local_queue_size": "big",
	}})
	assert.Equal(t, `weft: config key "driver.kind": driver "test-driver-elsewhere" is not available on this system: `+
		`test-driver-elsewhere needs plan9 (from overrides) (valid: test-driver, none)`, requireProblem(t, err, "driver.kind"))
	requireProblem(t, err, "driver.local_queue_size", "want an integer")
	assert.Len(t, problems(t, err), 2)
}

// badRegistrationEnv marks the child process of
// TestAWrongRegistrationFailsEveryLoadNamingTheModule: the registry is
// process-wide and keeps what it refused, so the test registers wrongly in
// a process of its own.
const badRegistrationEnv = "CONFIG_TEST_BAD_REGISTRATION"

func TestAWrongRegistrationFailsEveryLoadNamingTheModule(t *testing.T) {
	if os.Getenv(badRegistrationEnv) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAWrongRegistrationFailsEveryLoadNamingTheModule$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), badRegistrationEnv+"=1")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "--- PASS: TestAWrongRegistrationFailsEveryLoadNamingTheModule")
		return
	}
	// A second "test-driver", registered as a test's fake is.
	core.Register(core.Module{Kind: core.KindDriver, Name: "test-driver", Doc: "a second test-driver", New: newNothing})
	var err error
	require.NotPanics(t, func() { _, err = config.LoadWith(config.LoadOptions{}) })
	var re *core.RegistrationError
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, `weft: registering driver module "test-driver": the name is already taken by another module `+
		`(a fake driver without options)`, err.Error())
}

func TestAPluginKindWithoutThePluginsPackageSaysWhichImportEnablesIt(t *testing.T) {
	// This test binary does not link github.com/weftrt/weft/plugins.
	for _, kind := range []string{"scheduler", "driver", "timer"} {
		key := kind + ".kind"
		_, err := config.LoadWith(config.LoadOptions{Overrides: map[string]any{key: "plugin"}})
		requireProblem(t, err, key, `unknown `+kind+` "plugin"`,
			`the "plugin" module is not linked into this program; enable it with import _ "github.com/weftrt/weft/plugins"`)
	}
}
