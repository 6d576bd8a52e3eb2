package plugins_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/config"
)

func load(overrides map[string]any) (*config.Composition, error) {
	return config.LoadWith(config.LoadOptions{Overrides: overrides})
}

func TestAPluginDriverIsSelectedAndValidatedByConfiguration(t *testing.T) {
	comp, err := load(map[string]any{
		"driver.kind": "plugin", "driver.path": epollBin, "driver.sha256": epollSum,
		"driver.args": []string{"-x"}, "driver.env": []string{"A=b"},
		"driver.restart.max": 3, "driver.restart.backoff": "5ms",
	})
	require.NoError(t, err)
	cfg := comp.Driver.Config.(*plugins.Config)
	assert.Equal(t, epollBin, cfg.Path)
	assert.Equal(t, 3, cfg.Restart.Max)
	assert.Equal(t, []string{"A=b"}, cfg.Env)

	st := plugins.ListConfigured(comp)
	require.Len(t, st, 1)
	assert.Equal(t, "ok", st[0].State)
	assert.Equal(t, "epoll", st[0].Module)
}

// configErr loads a driver section and returns the text of its error.
func configErr(t *testing.T, overrides map[string]any) string {
	t.Helper()
	overrides["driver.kind"] = "plugin"
	_, err := load(overrides)
	require.Error(t, err)
	return err.Error()
}

func TestAMissingPluginBinaryIsAConfigurationErrorNamingItsKey(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "gone")
	msg := configErr(t, map[string]any{"driver.path": missing, "driver.sha256": epollSum})
	assert.Contains(t, msg, `config key "driver.path": no such file`)
	assert.Contains(t, msg, missing)

	msg = configErr(t, map[string]any{"driver.sha256": epollSum})
	assert.Contains(t, msg, `config key "driver.path": required: the plugin binary to run`)
}

func TestABadChecksumIsAConfigurationErrorNamingItsKey(t *testing.T) {
	msg := configErr(t, map[string]any{"driver.path": epollBin, "driver.sha256": strings.Repeat("0", 64)})
	assert.Contains(t, msg, `config key "driver.sha256": checksum mismatch: `+epollBin+" has sha256 "+epollSum)

	msg = configErr(t, map[string]any{"driver.path": epollBin, "driver.sha256": "xyz"})
	assert.Contains(t, msg, `config key "driver.sha256": want 64 hexadecimal digits, got "xyz"`)

	msg = configErr(t, map[string]any{"driver.path": epollBin})
	assert.Contains(t, msg, `config key "driver.sha256": required`)
}

func TestAPluginOfTheWrongKindIsAConfigurationErrorNamingItsKey(t *testing.T) {
	msg := configErr(t, map[string]any{"driver.path": testBin, "driver.sha256": testSum, "driver.args": []string{"kind"}})
	assert.Contains(t, msg, `config key "driver.path": `+testBin+` serves a timer plugin ("test-kind"), not a driver`)
}

func TestOtherBadPluginSettingsAreConfigurationErrorsNamingTheirKeys(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "plain")
	copyFile(t, epollBin, notExec, 0o644)
	msg := configErr(t, map[string]any{
		"driver.path": notExec, "driver.sha256": epollSum,
		"driver.env": []string{"NOEQUALS"}, "driver.restart.backoff": "0s", "driver.max_in_flight": 0,
		"driver.bogus": 1,
	})
	for _, want := range []string{
		`config key "driver.path": ` + notExec + ` is not executable (mode -rw-r--r--)`,
		`config key "driver.env[0]": want KEY=value, got "NOEQUALS"`,
		`config key "driver.restart.backoff": must be > 0`,
		`config key "driver.max_in_flight": must be >= 1`,
		`config key "driver.bogus": unknown key`,
	} {
		assert.Contains(t, msg, want)
	}
}

func TestPluginTimersAndSchedulersAreSelectedByConfiguration(t *testing.T) {
	comp, err := load(map[string]any{
		"timer.kind": "plugin", "timer.path": wheelBin, "timer.sha256": wheelSum, "timer.fire_timeout": "2s",
		"scheduler.kind": "plugin", "scheduler.path": prioBin, "scheduler.sha256": prioSum, "scheduler.max_decision": 16,
	})
	require.NoError(t, err)
	assert.Equal(t, 16, comp.Scheduler.Config.(*plugins.Config).MaxDecision)
	st := plugins.ListConfigured(comp)
	require.Len(t, st, 2)
	assert.Equal(t, core.KindTimer, st[0].Section)
	assert.Equal(t, "wheel", st[0].Module)
	assert.Equal(t, "ok", st[0].State)
	assert.Equal(t, core.KindScheduler, st[1].Section)
	assert.Equal(t, "priority", st[1].Module)
	assert.Equal(t, "ok", st[1].State)
}

// A binary of one kind configured as another is refused, naming the key.
func TestAPluginOfTheWrongKindIsRefusedForEverySection(t *testing.T) {
	for _, c := range []struct {
		section, path, sum, serves, name string
	}{
		{"driver", wheelBin, wheelSum, "timer", "wheel"},
		{"timer", epollBin, epollSum, "driver", "epoll"},
		{"timer", prioBin, prioSum, "scheduler", "priority"},
		{"scheduler", wheelBin, wheelSum, "timer", "wheel"},
	} {
		_, err := load(map[string]any{c.section + ".kind": "plugin", c.section + ".path": c.path, c.section + ".sha256": c.sum})
		require.Error(t, err, "%s configured as a %s", c.path, c.section)
		assert.Contains(t, err.Error(),
			`config key "`+c.section+`.path": `+c.path+` serves a `+c.serves+` plugin ("`+c.name+`"), not a `+c.section)
	}
}

func TestBadTimerAndSchedulerPluginSettingsNameTheirKeys(t *testing.T) {
	_, err := load(map[string]any{"timer.kind": "plugin", "timer.path": wheelBin, "timer.sha256": wheelSum, "timer.fire_timeout": "0s"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config key "timer.fire_timeout": must be > 0`)
	_, err = load(map[string]any{"scheduler.kind": "plugin", "scheduler.path": prioBin, "scheduler.sha256": prioSum,
		"scheduler.max_decision": 0, "scheduler.decision_timeout": "-1s"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `config key "scheduler.max_decision": must be >= 1 and <= 65536, got 0`)
	assert.Contains(t, err.Error(), `config key "scheduler.decision_timeout": must be > 0`)
}

// runtime/config knows this module by name, without importing it, so that a
// configuration asking for it in a program without this package names the
// import that enables it; renaming the module must rename it there too.
func TestTheModuleNameIsTheOneCoreConfigHintsAt(t *testing.T) {
	assert.Equal(t, "plugin", plugins.ModuleName, "see optInModules in runtime/config/load.go")
}
