package plugins_test

import (
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/plugins"
)

// A supervisor stopped while it restarts a crashed plugin (after the
// process started, before the owner saw its session) ends that process
// rather than supervising it for nobody.
func TestASupervisorStoppedDuringARestartEndsTheNewProcess(t *testing.T) {
	crash := make(chan struct{})
	var sup *plugins.Supervised
	var pids []int
	opened := 0
	sup, err := plugins.Supervise(plugins.LaunchConfig{Path: prioBin, SHA256: digest(t, prioSum)},
		plugins.RestartPolicy{Backoff: time.Millisecond},
		func(pid int) (func() error, error) {
			opened++
			pids = append(pids, pid)
			if opened == 1 {
				return func() error { <-crash; return errors.New("the session broke") }, nil
			}
			// The restart: the owner stops the supervisor now, and
			// this session's end would never come.
			sup.Stop()
			return func() error { select {} }, nil
		})
	require.NoError(t, err)
	close(crash)
	returnsWithin(t, "waiting for the stopped supervisor", sup.Wait)
	require.Equal(t, 2, opened)
	require.ErrorIs(t, syscall.Kill(pids[1], 0), syscall.ESRCH, "the restarted process was ended and reaped")
}
