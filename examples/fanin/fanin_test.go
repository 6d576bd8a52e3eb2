package fanin_test

import (
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/fanin"
	"github.com/weftrt/weft/lib/wsync/oneshot"
)

func quick(n int) []fanin.Job {
	js := make([]fanin.Job, n)
	for i := range js {
		js[i] = func(c *weft.Ctx) int { c.Yield(); return i }
	}
	return js
}

// With time enough, every job's result arrives exactly once, through a
// buffer much smaller than the number of jobs.
func TestEveryResultArrivesOnceBeforeTheDeadline(t *testing.T) {
	rep, err := weft.Main(func(c *weft.Ctx) (fanin.Report, error) {
		return fanin.Collect(c, quick(500), 8, 2, time.Hour), nil
	})
	require.NoError(t, err)
	assert.False(t, rep.TimedOut)
	got := append([]int(nil), rep.Results...)
	sort.Ints(got)
	require.Len(t, got, 500)
	for i, v := range got {
		require.Equal(t, i, v)
	}
}

// Jobs that never finish do not hold the collector past its deadline: it
// returns what arrived, marked as timed out, and the workers are
// cancelled with the runtime. The runtime's clock is virtual, so the
// deadline passes only once every task waits: the outcome does not depend
// on how fast the machine runs the quick jobs.
func TestTheDeadlineEndsTheCollection(t *testing.T) {
	r, err := weft.NewBuilder().IgnoreEnv().Scheduler("currentthread").Clock("virtual").Build()
	require.NoError(t, err)
	defer r.Close()
	rep, err := weft.MainOn(r, func(c *weft.Ctx) (fanin.Report, error) {
		never, rx := oneshot.New[int]()
		defer never.Close()
		js := quick(3)
		js = append(js, func(c *weft.Ctx) int { // waits for a value nobody sends
			v, _ := weft.Await(c, rx.Recv()).Unwrap()
			return v
		})
		return fanin.Collect(c, js, 1, 1, time.Hour), nil
	})
	require.NoError(t, err)
	assert.True(t, rep.TimedOut)
	assert.ElementsMatch(t, []int{0, 1, 2}, rep.Results, "the results sent before the deadline are all collected")
}
