package percore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/park"
	"github.com/weftrt/weft/schedulers/internal/schedtest"
)

func waitParkerState(t *testing.T, p *park.Parker, want park.State) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for p.State() != want {
		require.True(t, time.Now().Before(deadline), "the worker never reached parker state %d", want)
		time.Sleep(50 * time.Microsecond)
	}
}

// Each worker's driver calls that worker's parker when I/O is registered
// while the driver was quiescent: a worker parked off its driver wakes and
// parks again in the driver. Without the hook the worker would stay off
// the driver, where no I/O event reaches it.
func TestRegisteringIOMovesAParkedWorkerIntoItsDriver(t *testing.T) {
	var q *schedtest.QuiescentDriver
	f := &fakeDrivers{wrap: func(d *fakeDriver) core.Driver {
		q = &schedtest.QuiescentDriver{Driver: d}
		return q
	}}
	_, s := runtimeWith(t, 1, f)

	p := s.workers[0].parker
	waitParkerState(t, p, park.ParkedOffDriver)
	require.Zero(t, f.all()[0].parks.Load(), "a worker with a quiescent driver parked in it")
	q.Register()
	waitParkerState(t, p, park.ParkedDriver)
}
