package workstealing_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/workstealing"
)

func TestDefaultConfigHasOneWorkerPerProcessor(t *testing.T) {
	c := workstealing.DefaultConfig()
	assert.Equal(t, runtime.GOMAXPROCS(0), c.Workers)
	assert.Equal(t, runtime.GOMAXPROCS(0), c.WorkerCount())
	assert.Equal(t, 0, c.GlobalQueueInterval, "self-tuned")
	assert.Equal(t, 61, c.EventInterval)
	assert.True(t, c.LIFOSlot)
	assert.Equal(t, 3, c.MaxLIFOPolls)
	assert.NoError(t, c.Validate())
}

func TestValidateNamesEveryInvalidKey(t *testing.T) {
	c := workstealing.Config{Workers: 0, GlobalQueueInterval: -1, EventInterval: 0, MaxLIFOPolls: 0}
	err := c.Validate()
	require.Error(t, err)
	var keys []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *core.ConfigError
		require.True(t, errors.As(e, &ce), "%v is a *core.ConfigError", e)
		keys = append(keys, ce.Key)
	}
	assert.Equal(t, []string{"workers", "global_queue_interval", "event_interval", "max_lifo_polls"}, keys)
}

func TestNewRefusesAnInvalidConfig(t *testing.T) {
	c := workstealing.DefaultConfig()
	c.Workers = -2
	_, err := workstealing.New(c, core.SchedulerParams{Tasks: core.NewTaskSet(nil)})
	var ce *core.ConfigError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, "workers", ce.Key)
}

func TestTheSchedulerIsRegisteredAsWorkstealing(t *testing.T) {
	m, err := core.Lookup(core.KindScheduler, "workstealing")
	require.NoError(t, err)
	assert.Equal(t, workstealing.Name, m.Name)
	cfg, ok := m.NewConfig().(*workstealing.Config)
	require.True(t, ok)
	assert.Equal(t, workstealing.DefaultConfig(), *cfg)
}

func TestAConfigurationErrorNamesTheFullKey(t *testing.T) {
	_, err := rt.NewBuilder().IgnoreEnv().Scheduler("workstealing").Set("scheduler.max_lifo_polls", 0).Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `weft: config key "scheduler.max_lifo_polls": must be >= 1, got 0`)
}

func TestConfigurationKeysReachTheScheduler(t *testing.T) {
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("workstealing").
		Set("scheduler.workers", 3).
		Set("scheduler.global_queue_interval", 9).
		Set("scheduler.event_interval", 17).
		Set("scheduler.lifo_slot", false).
		Set("scheduler.max_lifo_polls", 2).
		Build()
	require.NoError(t, err)
	defer r.ShutdownBackground()
	s := r.Scheduler().(*workstealing.Scheduler)
	assert.Equal(t, workstealing.Config{Workers: 3, GlobalQueueInterval: 9, EventInterval: 17, LIFOSlot: false, MaxLIFOPolls: 2}, s.Config())
	assert.Len(t, r.Metrics(), 3)
}

// A worker count the machine cannot serve is refused when the
// configuration is checked, naming the bound and why: a billion workers
// ran the build out of memory, and 10^5 took minutes to start.
func TestWorkersAreBoundedByWhatTheMachineServes(t *testing.T) {
	limit := workstealing.MaxWorkers()
	assert.Equal(t, workstealing.WorkersPerCPU*runtime.NumCPU(), limit)
	for _, n := range []int{1_000_000_000, 100_000, limit + 1} {
		_, err := rt.NewBuilder().IgnoreEnv().Scheduler("workstealing").Workers(n).Composition()
		require.Error(t, err, n)
		assert.Contains(t, err.Error(), fmt.Sprintf(`weft: config key "scheduler.workers": must be at most %d (64 per CPU, and this machine has %d;`,
			limit, runtime.NumCPU()), n)
		assert.Contains(t, err.Error(), fmt.Sprintf("got %d", n))
	}
	c := workstealing.DefaultConfig()
	c.Workers = limit
	assert.NoError(t, c.Validate())
}

func TestAFixedIntervalBeyondTheTickCounterIsRejected(t *testing.T) {
	if math.MaxInt <= workstealing.MaxInterval {
		t.Skip("an int cannot exceed the tick counter here")
	}
	c := workstealing.DefaultConfig()
	c.EventInterval = int(workstealing.MaxInterval + 1)
	c.GlobalQueueInterval = math.MaxInt
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"event_interval": must be at most 4294967295 (a worker counts ticks in 32 bits)`)
	assert.Contains(t, err.Error(), `"global_queue_interval": must be at most 4294967295`)
}
