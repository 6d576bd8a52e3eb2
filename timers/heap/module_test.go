package heap_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/timers/heap"
)

func TestTheHeapIsRegisteredAsTimerHeap(t *testing.T) {
	m, err := core.Lookup(core.KindTimer, "heap")
	require.NoError(t, err)
	assert.NotEmpty(t, m.Doc)
	cfg, ok := m.NewConfig().(*heap.Config)
	require.True(t, ok)
	assert.Equal(t, heap.DefaultArity, cfg.Arity)
	require.NoError(t, cfg.Validate())

	v, err := m.New(cfg, &core.TimerParams{Clock: core.NewVirtualClock(), Shards: 1})
	require.NoError(t, err)
	h, ok := v.(*heap.Heap)
	require.True(t, ok)
	assert.Equal(t, 1, h.Shards(), "a single worker gets a single shard")
}

func TestABadArityIsAConfigErrorListingTheValidOnes(t *testing.T) {
	err := (&heap.Config{Arity: 3}).Validate()
	var ce *core.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "arity", ce.Key)
	assert.Equal(t, []string{"2", "4", "8", "16"}, ce.Valid)
	assert.Equal(t, `weft: config key "arity": must be a power of two from 2 to 16, got 3 (valid: 2, 4, 8, 16)`, err.Error())
}

func TestAShardCountOutOfRangeIsAConfigErrorNamingTheKey(t *testing.T) {
	err := (&heap.Config{Shards: -1, Arity: 4}).Validate()
	var ce *core.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "shards", ce.Key)
}

func TestBuildingWithoutAClockFailsClearly(t *testing.T) {
	m, err := core.Lookup(core.KindTimer, "heap")
	require.NoError(t, err)
	_, err = m.New(m.NewConfig(), &core.TimerParams{})
	assert.ErrorContains(t, err, `timer "heap" needs core.TimerParams with a clock`)
}

func TestValidateReportsEveryInvalidKeyAtOnce(t *testing.T) {
	err := (&heap.Config{Shards: -1, Arity: 3}).Validate()
	require.Error(t, err)
	j, ok := err.(interface{ Unwrap() []error })
	require.True(t, ok, "a joined error: %v", err)
	var keys []string
	for _, e := range j.Unwrap() {
		var ce *core.ConfigError
		require.True(t, errors.As(e, &ce), "%v is a *core.ConfigError", e)
		keys = append(keys, ce.Key)
	}
	assert.Equal(t, []string{"shards", "arity"}, keys)
}
