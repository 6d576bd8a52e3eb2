package plugins_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/rt"
)

// A frame the host cannot parse ends the session: what was pending fails
// with an error naming the plugin and saying what was wrong, the process
// is ended and the supervisor starts a fresh one. The plugins here answer
// every frame with garbage (internal/testplugin's malformed modes).

// eventually waits, at most liveness, for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, liveness)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var fastRestart = plugins.RestartPolicy{Backoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}

// garbling launches the test plugin in one of its malformed modes.
func garbling(t *testing.T, mode string) plugins.LaunchConfig {
	return plugins.LaunchConfig{Path: testBin, SHA256: digest(t, testSum), Args: []string{mode}}
}

func TestAMalformedDriverFrameFailsThePendingOperationAndRestartsThePlugin(t *testing.T) {
	d, err := plugins.NewDriver(plugins.DriverOptions{
		Launch:  garbling(t, "malformed-driver"),
		Restart: fastRestart,
	})
	require.NoError(t, err)
	defer d.Close()
	_, _, err = d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{})
	requireErrorText(t, err, plugins.ErrPluginExited, `plugin "testplugin"`,
		"protocol error", "completion status 9 of operation 1")
	eventually(t, "the plugin restarted", func() bool { return d.Restarts() >= 1 })
}

func TestAMalformedTimerReplyFiresFromTheHostsTableAndRestartsThePlugin(t *testing.T) {
	tp, err := plugins.StartTimerPlugin(plugins.TimerOptions{
		Launch:  garbling(t, "malformed-timer"),
		Restart: fastRestart,
	})
	require.NoError(t, err)
	defer tp.Close()
	clock := core.NewVirtualClock()
	clock.SetAutoAdvance(false)
	tm, err := tp.NewTimer(clock)
	require.NoError(t, err)
	e := &core.TimerEntry{Deadline: clock.Now() + core.Instant(time.Millisecond)}
	tm.Insert(e)
	clock.Advance(time.Second)
	// The plugin answers the Fire with garbage: the session ends and the
	// entry fires from the host's table.
	assert.Equal(t, 1, tm.Fire(clock.Now()))
	assert.True(t, e.Fired())
	eventually(t, "the plugin restarted", func() bool { return tp.Restarts() >= 1 && tp.Running() })
}

func TestAMalformedPolicyAnswerFallsBackToFIFOAndRestartsThePlugin(t *testing.T) {
	var sched *plugins.Scheduler
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		o := plugins.SchedulerOptions{
			Launch:          garbling(t, "malformed-policy"),
			Restart:         fastRestart,
			DecisionTimeout: time.Minute,
		}
		s, err := plugins.NewScheduler(o, p)
		sched = s
		return s, err
	}).Build()
	require.NoError(t, err)
	defer r.Close()
	// Every task runs once, whatever the policy answers.
	const n = 30
	got := prioritised(t, r, n, []int{1, 2})
	slices.Sort(got)
	require.Equal(t, wantPriorityOrder(n, []int{0}), got)
	eventually(t, "the policy restarted", func() bool { return sched.Restarts() >= 1 })
}
