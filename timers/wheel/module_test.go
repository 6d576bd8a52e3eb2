package wheel_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/timers/wheel"
)

func TestTheWheelIsRegisteredAsTimerWheel(t *testing.T) {
	m, err := core.Lookup(core.KindTimer, "wheel")
	require.NoError(t, err)
	assert.NotEmpty(t, m.Doc)
	cfg := m.NewConfig()
	require.IsType(t, &wheel.Config{}, cfg)

	v, err := m.New(cfg, &core.TimerParams{Clock: core.NewVirtualClock(), Shards: 3})
	require.NoError(t, err)
	w, ok := v.(*wheel.Wheel)
	require.True(t, ok)
	assert.Equal(t, 64, w.Shards(), "three workers get sixteen shards each, rounded up to a power of two")

	v, err = m.New(&wheel.Config{Shards: 2}, &core.TimerParams{Clock: core.NewVirtualClock(), Shards: 64})
	require.NoError(t, err)
	assert.Equal(t, 2, v.(*wheel.Wheel).Shards(), "a configured shard count wins over the worker hint")
}

func TestAShardCountOutOfRangeIsAConfigErrorNamingTheKey(t *testing.T) {
	for _, n := range []int{-1, wheel.MaxShards + 1} {
		err := (&wheel.Config{Shards: n}).Validate()
		var ce *core.ConfigError
		require.True(t, errors.As(err, &ce), "%d: %v", n, err)
		assert.Equal(t, "shards", ce.Key)
		assert.Contains(t, err.Error(), `weft: config key "shards": must be between 0`)
	}
	assert.NoError(t, (&wheel.Config{Shards: 0}).Validate())
}

func TestBuildingWithoutAClockFailsClearly(t *testing.T) {
	m, err := core.Lookup(core.KindTimer, "wheel")
	require.NoError(t, err)
	_, err = m.New(&wheel.Config{}, &core.TimerParams{})
	assert.ErrorContains(t, err, `timer "wheel" needs core.TimerParams with a clock`)
	_, err = m.New(&wheel.Config{Shards: -3}, &core.TimerParams{Clock: core.NewRealClock()})
	assert.ErrorContains(t, err, `"shards"`)
}

// Linked without the weft facade, the wheel is the default timer: the
// default is declared where the module registers. (The integration module
// checks the whole default composition with every module linked.)
func TestWithoutTheFacadeTheWheelIsTheDefaultTimer(t *testing.T) {
	m, ok := core.Preferred(core.KindTimer, core.Modules())
	require.True(t, ok, "no default timer")
	assert.Equal(t, "wheel", m.Name)
}
