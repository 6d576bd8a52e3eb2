package currentthread_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/currentthread"
)

// configErrors flattens a Validate or load error into its problems.
func configErrors(t *testing.T, err error) []*core.ConfigError {
	t.Helper()
	require.Error(t, err)
	var out []*core.ConfigError
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var ce *core.ConfigError
		require.True(t, errors.As(e, &ce), "%v is a *core.ConfigError", e)
		out = append(out, ce)
	}
	return out
}

func TestValidateReportsEveryInvalidKeyAtOnce(t *testing.T) {
	errs := configErrors(t, (&currentthread.Config{EventInterval: 0, GlobalQueueInterval: -1}).Validate())
	require.Len(t, errs, 2)
	assert.Equal(t, `weft: config key "event_interval": must be >= 1, got 0`, errs[0].Error())
	assert.Equal(t, `weft: config key "global_queue_interval": must be >= 1, got -1`, errs[1].Error())

	// Through the loader, both keys are named in full.
	_, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").
		Set("scheduler.event_interval", 0).Set("scheduler.global_queue_interval", 0).Composition()
	var keys []string
	for _, e := range configErrors(t, err) {
		keys = append(keys, e.Key)
	}
	assert.Equal(t, []string{"scheduler.event_interval", "scheduler.global_queue_interval"}, keys)
}

// The scheduler counts ticks in 32 bits and takes the tick modulo each
// interval, so an interval of 2^32 would be zero there.
func TestAnIntervalBeyondTheTickCounterIsRejected(t *testing.T) {
	if math.MaxInt <= currentthread.MaxInterval {
		t.Skip("an int cannot exceed the tick counter here")
	}
	tooBig := int(currentthread.MaxInterval + 1)
	errs := configErrors(t, (&currentthread.Config{EventInterval: tooBig, GlobalQueueInterval: math.MaxInt}).Validate())
	require.Len(t, errs, 2)
	for _, e := range errs {
		assert.True(t, strings.HasPrefix(e.Problem, "must be at most 4294967295 (a worker counts ticks in 32 bits)"), e.Problem)
	}
	assert.NoError(t, (&currentthread.Config{EventInterval: tooBig - 1, GlobalQueueInterval: 1}).Validate())
}
