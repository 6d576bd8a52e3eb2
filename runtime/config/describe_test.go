package config_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

func TestStringListsEveryKeyWithItsValue(t *testing.T) {
	c := mustLoad(t, config.LoadOptions{Overrides: map[string]any{"timer.kind": "test-timer"}})
	assert.Equal(t, ""+
		"runtime.name                 = weft\n"+
		"runtime.unhandled_panic      = log\n"+
		"runtime.shutdown_timeout     = 10s\n"+
		"runtime.event_buffer         = 1024\n"+
		"runtime.blocking.max_threads = 512\n"+
		"runtime.blocking.keep_alive  = 10s\n"+
		"driver.kind                  = none\n"+
		"clock.kind                   = real\n"+
		"timer.kind                   = test-timer\n"+
		"timer.resolution             = 1ms\n"+
		"scheduler.kind               = test-sched\n"+
		"scheduler.workers            = 2\n"+
		"scheduler.pinned             = false\n"+
		"scheduler.tick               = 1ms\n"+
		"scheduler.cpus               = []\n"+
		"scheduler.tags               = [a]\n"+
		"scheduler.ratio              = 0.5\n"+
		"scheduler.queue.depth        = 256\n"+
		"scheduler.queue.policy       = fifo\n"+
		"scheduler.queue.lifo_limit   = 3\n",
		c.String())
}

func TestYAMLLoadsBackToTheSameComposition(t *testing.T) {
	want := mustLoad(t, config.LoadOptions{Overrides: map[string]any{
		"runtime.name":             "true", // a string that reads as a boolean
		"runtime.shutdown_timeout": 1500 * time.Millisecond,
		"driver.kind":              "test-driver",
		"timer.kind":               "test-timer",
		"scheduler.tags":           []string{"007", "a b", ""},
		"scheduler.cpus":           []int{1, 2},
		"scheduler.ratio":          1.0,
		"scheduler.queue.policy":   "lifo",
	}})
	out, err := want.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(out), "kind: test-driver # a fake driver without options")

	path := filepath.Join(t.TempDir(), "again.yaml")
	require.NoError(t, os.WriteFile(path, out, 0o644))
	got, err := config.LoadWith(config.LoadOptions{Path: path})
	require.NoError(t, err, "YAML:\n%s", out)

	assert.Equal(t, want.Runtime, got.Runtime)
	for _, kind := range core.Kinds {
		assert.Equal(t, want.Selection(kind).Name, got.Selection(kind).Name)
		assert.Equal(t, want.Selection(kind).Config, got.Selection(kind).Config)
	}
	assert.Equal(t, want.String(), got.String())
}

func TestSettingsOfListsAModulesKeysWithTheirDefaults(t *testing.T) {
	m, err := core.Lookup(core.KindScheduler, "test-sched")
	require.NoError(t, err)
	settings := config.SettingsOf("", m.NewConfig())
	var keys, types, values []string
	for _, s := range settings {
		keys = append(keys, s.Key)
		types = append(types, s.Type)
		values = append(values, s.ValueString())
	}
	assert.Equal(t, []string{"workers", "pinned", "tick", "cpus", "tags", "ratio", "queue.depth", "queue.policy", "queue.lifo_limit"}, keys)
	assert.Equal(t, []string{"integer", "boolean", "duration", "list of integers", "list of strings", "number",
		"non-negative integer", "string", "integer"}, types)
	assert.Equal(t, []string{"2", "false", "1ms", "[]", "[a]", "0.5", "256", "fifo", "3"}, values)
	assert.Equal(t, "workers = 2", settings[0].String())

	assert.Nil(t, config.SettingsOf("x", nil))
	assert.Nil(t, config.SettingsOf("x", 3))
	assert.Equal(t, "x.name", config.SettingsOf("x", config.DefaultRuntime())[0].Key)
}

func TestEnvNameUpperCasesTheKeyWithUnderscores(t *testing.T) {
	assert.Equal(t, "WEFT_RUNTIME_BLOCKING_MAX_THREADS", config.EnvName("runtime.blocking.max_threads"))
	assert.Equal(t, "WEFT_SCHEDULER_KIND", config.EnvName("scheduler.kind"))
}
