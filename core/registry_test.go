package core_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// rankedDriver is a driver module for the rank tests: it is never built.
func rankedDriver(name string, rank int, available error) core.Module {
	return core.DriverModule(name, name, nil, func(struct{}, core.DriverParams) (core.Driver, error) {
		return nil, errors.New("not built in this test")
	}, core.DefaultRank(rank), core.AvailableWhen(func() error { return available }))
}

func TestPreferredTakesTheHighestRankedAvailableModule(t *testing.T) {
	mods := []core.Module{
		rankedDriver("low", 10, nil),
		rankedDriver("high", 20, nil),
		rankedDriver("unranked", 0, nil),
		core.ClockModule("clock", "", nil, func(struct{}, core.ClockParams) (core.Clock, error) { return nil, nil }, core.DefaultRank(99)),
	}
	m, ok := core.Preferred(core.KindDriver, mods)
	require.True(t, ok)
	assert.Equal(t, "high", m.Name)
}

func TestPreferredFallsToTheNextRankWhenTheTopOneIsUnavailable(t *testing.T) {
	mods := []core.Module{
		rankedDriver("top", 30, errors.New("top needs plan9")),
		rankedDriver("next", 20, nil),
		rankedDriver("last", 10, nil),
	}
	m, ok := core.Preferred(core.KindDriver, mods)
	require.True(t, ok)
	assert.Equal(t, "next", m.Name)
}

func TestPreferredBreaksATieByName(t *testing.T) {
	m, ok := core.Preferred(core.KindDriver, []core.Module{rankedDriver("b", 5, nil), rankedDriver("a", 5, nil)})
	require.True(t, ok)
	assert.Equal(t, "a", m.Name)
}

func TestPreferredFindsNothingWithoutARankedAvailableModule(t *testing.T) {
	_, ok := core.Preferred(core.KindDriver, []core.Module{
		rankedDriver("unranked", 0, nil),
		rankedDriver("elsewhere", 10, errors.New("elsewhere needs plan9")),
	})
	assert.False(t, ok)
}

type typedConfig struct {
	N int `koanf:"n"`
}

func TestATypedModuleHandsItsBuildTheDecodedConfigAndTheParams(t *testing.T) {
	var got typedConfig
	var gotParams core.TimerParams
	m := core.TimerModule("typed", "", func() typedConfig { return typedConfig{N: 3} },
		func(c typedConfig, p core.TimerParams) (core.Timer, error) {
			got, gotParams = c, p
			return nil, errors.New("built")
		})
	cfg, ok := m.NewConfig().(*typedConfig)
	require.True(t, ok, "NewConfig returns a pointer to a copy of the defaults")
	assert.Equal(t, 3, cfg.N)
	cfg.N = 7
	_, err := m.BuildTimer(cfg, core.TimerParams{Shards: 4})
	require.EqualError(t, err, "built")
	assert.Equal(t, 7, got.N)
	assert.Equal(t, 4, gotParams.Shards)

	_, err = m.BuildTimer(nil, core.TimerParams{})
	require.EqualError(t, err, "built")
	assert.Equal(t, 3, got.N, "no configuration means the defaults")
}

func TestATypedModuleRefusesAForeignConfigurationWithAnError(t *testing.T) {
	m := core.TimerModule("typed", "", func() typedConfig { return typedConfig{} },
		func(typedConfig, core.TimerParams) (core.Timer, error) { return nil, nil })
	var err error
	assert.NotPanics(t, func() { _, err = m.BuildTimer(&struct{}{}, core.TimerParams{}) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), `timer "typed": configuration is *struct {}`)
	assert.NotPanics(t, func() { _, err = m.New(nil, &core.DriverParams{}) })
	assert.Contains(t, err.Error(), `timer "typed": parameters are *core.DriverParams`)
}

func TestBuildingAModuleAsAnotherKindIsAnError(t *testing.T) {
	clock, err := core.Lookup(core.KindClock, "real")
	require.NoError(t, err)
	_, err = clock.BuildScheduler(nil, core.SchedulerParams{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `clock "real"`)
}
