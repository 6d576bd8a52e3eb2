package main

import (
	"bytes"
	"log/slog"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// problemKey finds the key in a line of config check's output or a
// *core.ConfigError's message.
var problemKey = regexp.MustCompile(`^weft: config key "([^"]+)"`)

// checkKeys runs weft config check on path and returns the keys of the
// problems it printed, with its exit status.
func checkKeys(t *testing.T, path string, noEnv bool) (int, []string) {
	t.Helper()
	args := []string{"config", "check", path}
	if noEnv {
		args = []string{"config", "check", "-noenv", path}
	}
	status, _, stderr := weft(args...)
	var keys []string
	for _, line := range strings.Split(stderr, "\n") {
		if m := problemKey.FindStringSubmatch(line); m != nil {
			keys = append(keys, m[1])
		}
	}
	slices.Sort(keys)
	return status, keys
}

// buildKeys builds a runtime from path and returns the keys of the
// problems Build reported (nil when it built), failing the test on an
// error that names no key.
func buildKeys(t *testing.T, b *rt.Builder) []string {
	t.Helper()
	r, err := b.Build()
	if err == nil {
		require.NoError(t, r.Close())
		return nil
	}
	var keys []string
	for _, e := range flatten(err) {
		ce, ok := e.(*core.ConfigError)
		require.Truef(t, ok, "Build failed with %T, which names no key: %v", e, e)
		keys = append(keys, ce.Key)
	}
	slices.Sort(keys)
	return keys
}

// unavailableDriver is a driver module registered here that cannot exist
// on this system.
func unavailableDriver() string {
	if runtime.GOOS == "linux" {
		return "kqueue"
	}
	return "epoll"
}

// weft config check and Build agree on every input: a file check accepts
// builds, and the problems check prints are the ones Build reports, key
// for key. Each bad file is one that check used to accept and Build then
// failed on, crashed on or misread.
func TestConfigCheckAndBuildAgree(t *testing.T) {
	for _, c := range []struct {
		name, file string
		keys       []string // the problems both report; none for a good file
	}{
		{"good", "scheduler: {kind: workstealing, workers: 2}\ntimer: {kind: heap, arity: 8}\ndriver: {kind: none}\n", nil},
		{"workers out of memory", "scheduler: {kind: workstealing, workers: 1000000000}\n", []string{"scheduler.workers"}},
		{"workers never built", "scheduler: {kind: workstealing, workers: 100000}\n", []string{"scheduler.workers"}},
		{"event buffer", "runtime: {event_buffer: 1000000000}\n", []string{"runtime.event_buffer"}},
		{"driver of another system", "driver: {kind: " + unavailableDriver() + "}\n", []string{"driver.kind"}},
		{"pinned to a CPU nobody has", "scheduler: {kind: percore, workers: 1, pin: true, cpus: [0, 1023]}\n", pinKeys()},
		{"duration without a unit", "runtime: {shutdown_timeout: 5}\n", []string{"runtime.shutdown_timeout"}},
		{"two bad currentthread keys", "scheduler: {kind: currentthread, event_interval: 0, global_queue_interval: 0}\n",
			[]string{"scheduler.event_interval", "scheduler.global_queue_interval"}},
		{"two bad heap keys", "timer: {kind: heap, shards: -1, arity: 3}\n", []string{"timer.arity", "timer.shards"}},
		{"interval beyond the tick counter", "scheduler: {kind: currentthread, event_interval: 4294967296}\n",
			[]string{"scheduler.event_interval"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.file, "1023") && runtime.NumCPU() > 1023 {
				t.Skip("CPU 1023 may exist here")
			}
			path := writeFile(t, "weft.yaml", c.file)
			status, checked := checkKeys(t, path, true)
			built := buildKeys(t, rt.NewBuilder().IgnoreEnv().ConfigFile(path))
			assert.Equal(t, built, checked, "check and Build report the same keys")
			assert.Equal(t, c.keys, checked)
			if c.keys == nil {
				assert.Equal(t, exitOK, status)
			} else {
				assert.Equal(t, exitProblem, status)
			}
		})
	}
}

// pinKeys is where a pinned pool on CPUs 0 and 1023 fails: CPU 1023 is
// not this process's on Linux (unless the machine has that many), and
// pinning does not exist elsewhere.
func pinKeys() []string {
	if runtime.GOOS != "linux" {
		return []string{"scheduler.pin"}
	}
	return []string{"scheduler.cpus[1]"}
}

// A WEFT_ variable that names no key breaks neither: Build builds and
// logs a warning on the runtime's logger, and check passes with the same
// warning.
func TestAnUnknownWeftVariableIsAWarningForCheckAndBuildAlike(t *testing.T) {
	t.Setenv("WEFT_HOME", "/opt/weft")
	environ = os.Environ
	defer func() { environ = func() []string { return nil } }()
	path := writeFile(t, "weft.yaml", "scheduler: {kind: currentthread}\n")

	status, stdout, stderr := weft("config", "check", path)
	assert.Equal(t, exitOK, status, stderr)
	assert.Contains(t, stdout, "valid")
	assert.Contains(t, stderr, "warning: weft: ignoring environment variable WEFT_HOME: it names no section")

	var log bytes.Buffer
	r, err := rt.NewBuilder().ConfigFile(path).Logger(slog.New(slog.NewTextHandler(&log, nil))).Build()
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.Contains(t, log.String(), "level=WARN")
	assert.Contains(t, log.String(), "variable=WEFT_HOME")
}
