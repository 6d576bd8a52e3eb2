package co_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wsync/broadcast"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/lib/wsync/watch"
)

func TestRangeOverABoundedChannelYieldsEveryMessageInOrderUntilClose(t *testing.T) {
	got, err := run(t, newRuntime(t), func(c *co.Ctx) []int {
		tx, rx := mpsc.New[int](2)
		co.Go(c, func(c *co.Ctx) int {
			defer tx.Close()
			for i := range 50 {
				if err := co.Await(c, tx.Send(i)); err != nil {
					panic(err)
				}
			}
			return 0
		})
		var got []int
		for v := range co.Range(c, rx) {
			got = append(got, v)
		}
		return got
	})
	require.NoError(t, err)
	require.Len(t, got, 50)
	for i, v := range got {
		require.Equal(t, i, v)
	}
}

func TestBreakingOutOfARangeLosesNoMessage(t *testing.T) {
	got, err := run(t, newRuntime(t), func(c *co.Ctx) []int {
		tx, rx := mpsc.NewUnbounded[int]()
		co.Go(c, func(c *co.Ctx) int {
			for i := range 10 {
				_ = tx.Send(i)
				c.Yield()
			}
			tx.Close()
			return 0
		})
		var got []int
		for v := range co.Range(c, rx) {
			got = append(got, v)
			if v == 3 {
				break
			}
		}
		for v := range co.Range(c, rx) { // a second loop takes the rest
			got = append(got, v)
		}
		return got
	})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, got)
}

func TestAbortingATaskWaitingInARangeLeavesTheNextMessageInTheChannel(t *testing.T) {
	tx, rx := mpsc.New[int](4)
	err := runE(t, newRuntime(t), func(c *co.Ctx) error {
		var seen []int
		h := co.Go(c, func(c *co.Ctx) int {
			for v := range co.Range(c, rx) {
				seen = append(seen, v)
			}
			return 0
		})
		if err := tx.TrySend(1); err != nil {
			return err
		}
		for len(seen) < 1 {
			c.Yield()
		}
		c.Yield() // the ranging task is waiting for the next message
		h.Abort()
		if _, err := co.AwaitResult(c, h); !core.IsCancelled(err) {
			return errors.New("not cancelled")
		}
		if err := tx.TrySend(2); err != nil {
			return err
		}
		v, err := rx.TryRecv()
		if err != nil || v != 2 || len(seen) != 1 {
			return errors.New("the message after the abort was not left in the channel")
		}
		return nil
	})
	require.NoError(t, err)
}

func TestRangeBroadcastReportsALagAndGoesOnUntilClose(t *testing.T) {
	type item struct {
		v   int
		lag uint64
	}
	got, err := run(t, newRuntime(t), func(c *co.Ctx) []item {
		tx, rx := broadcast.New[int](2)
		for i := range 5 {
			if _, err := tx.Send(i); err != nil {
				panic(err)
			}
		}
		tx.Close()
		var got []item
		for v, err := range co.RangeBroadcast(c, rx) {
			var lag broadcast.LaggedError
			if errors.As(err, &lag) {
				got = append(got, item{lag: lag.Missed})
				continue
			}
			got = append(got, item{v: v})
		}
		return got
	})
	require.NoError(t, err)
	assert.Equal(t, []item{{lag: 3}, {v: 3}, {v: 4}}, got)
}

func TestRangeWatchYieldsEachChangeUntilTheSenderCloses(t *testing.T) {
	got, err := run(t, newRuntime(t), func(c *co.Ctx) []string {
		tx, rx := watch.New("init")
		co.Go(c, func(c *co.Ctx) int {
			for _, v := range []string{"a", "b", "c"} {
				_ = tx.Send(v)
				for rx.Borrow() == v && !seenAll(rx) {
					c.Yield()
				}
			}
			tx.Close()
			return 0
		})
		var got []string
		for v := range co.RangeWatch(c, rx) {
			got = append(got, v)
		}
		return got
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, got)
}

// seenAll reports whether rx has seen the current value.
func seenAll(rx *watch.Receiver[string]) bool {
	changed, _ := rx.HasChanged()
	return !changed
}
