package percore_test

import (
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/percore"
)

func TestDefaultConfig(t *testing.T) {
	c := percore.DefaultConfig()
	assert.Equal(t, min(runtime.GOMAXPROCS(0), percore.MaxWorkers), c.Workers)
	assert.Equal(t, c.Workers, c.WorkerCount())
	assert.False(t, c.LockThreads)
	assert.False(t, c.Pin)
	assert.Empty(t, c.CPUs)
	assert.Equal(t, 31, c.GlobalQueueInterval)
	assert.Equal(t, 61, c.EventInterval)
	assert.NoError(t, c.Validate())
}

func TestValidateNamesEveryInvalidKey(t *testing.T) {
	c := percore.Config{Workers: 65, CPUs: []int{1, 1, -3}, GlobalQueueInterval: 0, EventInterval: 0}
	err := c.Validate()
	require.Error(t, err)
	var keys []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *core.ConfigError
		require.True(t, errors.As(e, &ce), "%v is a *core.ConfigError", e)
		keys = append(keys, ce.Key)
	}
	assert.Equal(t, []string{"workers", "cpus", "cpus[1]", "cpus[2]", "global_queue_interval", "event_interval"}, keys)
}

func TestTheSchedulerIsRegisteredAsPercore(t *testing.T) {
	m, err := core.Lookup(core.KindScheduler, "percore")
	require.NoError(t, err)
	assert.Equal(t, percore.Name, m.Name)
	cfg, ok := m.NewConfig().(*percore.Config)
	require.True(t, ok)
	assert.Equal(t, percore.DefaultConfig(), *cfg)
}

func TestConfigurationErrorsNameTheFullKey(t *testing.T) {
	for _, c := range []struct {
		key   string
		value any
		want  string
	}{
		{"scheduler.workers", 100, `weft: config key "scheduler.workers": must be between 1 and 64, got 100`},
		{"scheduler.event_interval", 0, `weft: config key "scheduler.event_interval": must be >= 1, got 0`},
		{"scheduler.cpus", []int{0}, `weft: config key "scheduler.cpus": applies only to pinned workers`},
		{"scheduler.global_queue_interval", "often", `"scheduler.global_queue_interval"`},
		{"scheduler.no_such_key", 1, `"scheduler.no_such_key"`},
	} {
		_, err := rt.NewBuilder().IgnoreEnv().Scheduler(percore.Name).Set(c.key, c.value).Build()
		require.Error(t, err, c.key)
		assert.Contains(t, err.Error(), c.want, c.key)
	}
}

func TestConfigurationKeysReachTheScheduler(t *testing.T) {
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler(percore.Name).
		Set("scheduler.workers", 3).
		Set("scheduler.lock_threads", true).
		Set("scheduler.global_queue_interval", 9).
		Set("scheduler.event_interval", 17).
		Build()
	require.NoError(t, err)
	defer r.ShutdownBackground()
	s := r.Scheduler().(*percore.Scheduler)
	assert.Equal(t, percore.Config{Workers: 3, LockThreads: true, GlobalQueueInterval: 9, EventInterval: 17}, s.Config())
	assert.Equal(t, 3, s.Workers())
	assert.Len(t, r.Metrics(), 3)
}

func TestAnIntervalBeyondTheTickCounterIsRejected(t *testing.T) {
	if math.MaxInt <= percore.MaxInterval {
		t.Skip("an int cannot exceed the tick counter here")
	}
	c := percore.DefaultConfig()
	c.EventInterval = int(percore.MaxInterval + 1)
	c.GlobalQueueInterval = math.MaxInt
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"event_interval": must be at most 4294967295 (a worker counts ticks in 32 bits)`)
	assert.Contains(t, err.Error(), `"global_queue_interval": must be at most 4294967295`)
}
