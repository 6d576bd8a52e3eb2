package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/tools/internal/echo"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

// testSchedConfig is the configuration of the fake "test-sched" scheduler.
type testSchedConfig struct {
	Workers int    `koanf:"workers"`
	Policy  string `koanf:"policy"`
}

func (c *testSchedConfig) Validate() error {
	if c.Workers < 1 {
		return &core.ConfigError{Key: "workers", Problem: fmt.Sprintf("must be >= 1, got %d", c.Workers)}
	}
	return nil
}

func newNothing(any, any) (any, error) { return nil, errors.New("test module") }

func init() {
	core.Register(core.Module{
		Kind: core.KindScheduler, Name: "test-sched", Doc: "a fake scheduler for the weft command's tests",
		NewConfig: func() any { return &testSchedConfig{Workers: 3, Policy: "fifo"} },
		New:       newNothing,
	})
}

func TestMain(m *testing.M) {
	echo.ServeChildIfRequested()
	// Started by a plugin host as "plugins serve-driver NAME", the test
	// binary is the weft command serving a plugin.
	if len(os.Args) > 1 && os.Args[1] == "plugins" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// Keep the developer's WEFT_ variables out of the tests.
	environ = func() []string { return nil }
	os.Exit(m.Run())
}

// weft runs the command line in-process and returns its exit status and
// outputs.
func weft(args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = run(args, &out, &errOut)
	return status, out.String(), errOut.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestNoArgumentsPrintsTheUsageAsAUsageError(t *testing.T) {
	status, stdout, stderr := weft()
	assert.Equal(t, exitUsage, status)
	assert.Empty(t, stdout)
	for _, name := range []string{"version", "modules", "config", "help"} {
		assert.Regexp(t, `(?m)^\s+`+name+`\s+\S`, stderr)
	}
}

func TestHelpListsTheCommandsOrDescribesOne(t *testing.T) {
	status, stdout, _ := weft("help")
	assert.Equal(t, exitOK, status)
	assert.Contains(t, stdout, "Commands:")
	assert.Contains(t, stdout, "check a configuration file")

	status, stdout, _ = weft("help", "config")
	assert.Equal(t, exitOK, status)
	assert.Contains(t, stdout, "usage: weft config check [-noenv] FILE")

	status, _, stderr := weft("help", "frobnicate")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, `unknown command "frobnicate"`)
}

func TestAnUnknownCommandIsAUsageError(t *testing.T) {
	status, _, stderr := weft("frobnicate")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, `weft: unknown command "frobnicate"`)
	assert.Contains(t, stderr, "Commands:")
}

func TestVersionPrintsTheWeftAndGoVersions(t *testing.T) {
	status, stdout, _ := weft("version")
	assert.Equal(t, exitOK, status)
	assert.Contains(t, stdout, "weft "+Version+"\n")
	assert.Contains(t, stdout, runtime.Version())

	status, _, _ = weft("version", "extra")
	assert.Equal(t, exitUsage, status)
}

func TestModulesListsTheRealClockRegisteredByCore(t *testing.T) {
	status, stdout, _ := weft("modules")
	assert.Equal(t, exitOK, status)
	assert.Regexp(t, `(?m)^clock real \(default\)\n  the monotonic system clock\n  no configuration keys$`, stdout)
	assert.Regexp(t, `(?m)^driver epoll \(default\)$`, stdout)
	assert.Regexp(t, `(?m)^timer wheel \(default\)$`, stdout)
}

func TestModulesShowsEachKeyWithItsTypeAndDefault(t *testing.T) {
	status, stdout, _ := weft("modules", "-kind", "scheduler")
	assert.Equal(t, exitOK, status)
	assert.Regexp(t, `(?m)^scheduler test-sched\n  a fake scheduler for the weft command's tests\n`+
		`  KEY +TYPE +DEFAULT\n`+
		`  scheduler\.workers +integer +3\n`+
		`  scheduler\.policy +string +fifo$`, stdout)
	assert.NotContains(t, stdout, "clock real", "-kind lists one kind")
}

func TestModulesRejectsAnUnknownKind(t *testing.T) {
	status, _, stderr := weft("modules", "-kind", "gpu")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, `unknown kind "gpu" (valid: driver, clock, timer, scheduler)`)
}

func TestConfigCheckAcceptsAGoodFileAndPrintsTheComposition(t *testing.T) {
	path := writeFile(t, "weft.yaml", "runtime: {name: svc}\nscheduler: {kind: test-sched, workers: 8}\n")
	status, stdout, stderr := weft("config", "check", path)
	assert.Equal(t, exitOK, status, stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "# "+path+": valid\n")
	assert.Regexp(t, `(?m)^runtime\.name += svc$`, stdout)
	assert.Regexp(t, `(?m)^scheduler\.kind += test-sched$`, stdout)
	assert.Regexp(t, `(?m)^scheduler\.workers += 8$`, stdout)
	assert.Regexp(t, `(?m)^scheduler\.policy += fifo$`, stdout, "module defaults are shown too")
}

func TestConfigCheckRejectsAnUnknownSchedulerKind(t *testing.T) {
	path := writeFile(t, "weft.toml", "[scheduler]\nkind = \"workstealer\"\n")
	status, stdout, stderr := weft("config", "check", path)
	assert.Equal(t, exitProblem, status)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, `weft: config key "scheduler.kind": unknown scheduler "workstealer"`)
	valid := regexp.MustCompile(`\(valid: ([^)]*)\)`).FindStringSubmatch(stderr)
	require.NotNil(t, valid, stderr)
	assert.Contains(t, strings.Split(valid[1], ", "), "test-sched")
	assert.Contains(t, strings.Split(valid[1], ", "), config.DefaultKind(core.KindScheduler))
}

func TestConfigCheckPrintsEveryProblemOnItsOwnLine(t *testing.T) {
	path := writeFile(t, "weft.json", `{"runtime": {"event_buffer": 0}, "scheduler": {"kind": "test-sched", "workers": 0, "wokers": 1}, "tiemr": {}}`)
	status, _, stderr := weft("config", "check", path)
	assert.Equal(t, exitProblem, status)
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	require.Len(t, lines, 5, stderr)
	assert.Contains(t, lines[0], `"tiemr": unknown section`)
	assert.Contains(t, lines[1], `"runtime.event_buffer": must be >= 1, got 0`)
	assert.Contains(t, lines[2], `"scheduler.wokers": unknown key (valid: kind, policy, workers)`)
	assert.Contains(t, lines[3], `"scheduler.workers": must be >= 1, got 0`)
	assert.Equal(t, "weft config check: "+path+": 4 problems", lines[4])
}

func TestConfigCheckReportsAMissingOrMalformedFile(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent.yaml")
	status, _, stderr := weft("config", "check", missing)
	assert.Equal(t, exitProblem, status)
	assert.Contains(t, stderr, `weft: config file "`+missing+`": no such file`)

	bad := writeFile(t, "bad.yaml", "scheduler: [\n")
	status, _, stderr = weft("config", "check", bad)
	assert.Equal(t, exitProblem, status)
	assert.Contains(t, stderr, `weft: config file "`+bad+`": malformed yaml: yaml:`)
	assert.Contains(t, stderr, ": 1 problem\n")
}

func TestConfigCheckAppliesTheEnvironmentUnlessNoenv(t *testing.T) {
	environ = func() []string { return []string{"WEFT_SCHEDULER_WORKERS=0"} }
	defer func() { environ = func() []string { return nil } }()
	path := writeFile(t, "weft.yaml", "scheduler: {kind: test-sched}\n")

	status, _, stderr := weft("config", "check", path)
	assert.Equal(t, exitProblem, status)
	assert.Contains(t, stderr, `"scheduler.workers": must be >= 1, got 0 (from WEFT_SCHEDULER_WORKERS)`)

	status, _, stderr = weft("config", "check", "-noenv", path)
	assert.Equal(t, exitOK, status, stderr)
}

func TestConfigCheckNeedsExactlyOneFile(t *testing.T) {
	for _, args := range [][]string{{"config", "check"}, {"config", "check", "a.yaml", "b.yaml"}} {
		status, _, stderr := weft(args...)
		assert.Equal(t, exitUsage, status)
		assert.Contains(t, stderr, "usage: weft config check")
	}
	status, _, stderr := weft("config", "lint")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, `unknown subcommand "lint" (valid: check, defaults)`)
	status, _, _ = weft("config", "check", "-bogus", "a.yaml")
	assert.Equal(t, exitUsage, status)
}

func TestConfigDefaultsPrintsAFileThatChecksClean(t *testing.T) {
	status, stdout, stderr := weft("config", "defaults")
	require.Equal(t, exitOK, status, stderr)
	assert.Contains(t, stdout, "runtime:\n  name: weft\n")
	assert.Contains(t, stdout, "scheduler:\n  kind: "+config.DefaultKind(core.KindScheduler))
	assert.Equal(t, "workstealing", config.DefaultKind(core.KindScheduler), "the built-in modules' ranks")
	assert.Contains(t, stdout, "timer:\n  kind: wheel")

	path := writeFile(t, "defaults.yaml", stdout)
	status, checked, stderr := weft("config", "check", path)
	require.Equal(t, exitOK, status, stderr)
	def, err := config.LoadWith(config.LoadOptions{})
	require.NoError(t, err)
	assert.Equal(t, "# "+path+": valid\n"+def.String(), checked)
}
