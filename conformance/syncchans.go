package conformance

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync"
	"github.com/weftrt/weft/lib/wsync/broadcast"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/lib/wsync/oneshot"
	"github.com/weftrt/weft/lib/wsync/watch"
	"github.com/weftrt/weft/runtime/rt"
)

// The behaviours of the Sync suite for the channels (oneshot, mpsc,
// broadcast, watch), for primitives and channels used together by tasks
// that are aborted at random points, and for all of them at runtime
// shutdown.

// --- oneshot ---

func testSyncOneshot(c *syncCtx) error {
	const n = 50
	var hs []*core.JoinHandle[error]
	for i := 0; i < n; i++ {
		tx, rx := oneshot.New[int]()
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			r := syncAwait(c, core.Future[core.Result[int]](rx.Recv()))
			return syncCheck(r.Err == nil && r.Value == i, "received %d, %v, want %d", r.Value, r.Err, i)
		}))
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			c.yieldNow()
			return tx.SendFrom(c.cx, i)
		}))
	}
	return c.joinAll(hs)
}

func testSyncOneshotClosed(c *syncCtx) error {
	tx, rx := oneshot.New[int]()
	var queued atomic.Bool
	h := c.spawn(func(c *syncCtx) error {
		r, _ := syncAwaitMarked(c, core.Future[core.Result[int]](rx.Recv()), &queued)
		return syncCheck(errors.Is(r.Err, oneshot.ErrClosed), "receive from a closed sender: %v, %v", r.Value, r.Err)
	})
	c.until(queued.Load)
	tx.Close()
	return c.join(h)
}

// --- mpsc ---

func testSyncPingPong(c *syncCtx) error {
	const rounds = 2000
	there, thereRx := mpsc.New[int](1)
	back, backRx := mpsc.New[int](1)
	pong := c.spawn(func(c *syncCtx) error {
		var send mpsc.SendFuture[int]
		for {
			r := syncAwait(c, core.Future[core.Result[int]](thereRx.Recv()))
			if r.Err != nil {
				back.Close()
				return nil
			}
			if err := syncAwait(c, core.Future[error](back.SendInto(&send, r.Value+1))); err != nil {
				return err
			}
		}
	})
	var send mpsc.SendFuture[int]
	for i := 0; i < rounds; i++ {
		if err := syncAwait(c, core.Future[error](there.SendInto(&send, i))); err != nil {
			return err
		}
		r := syncAwait(c, core.Future[core.Result[int]](backRx.Recv()))
		if r.Err != nil || r.Value != i+1 {
			return fmt.Errorf("round %d: echo %d, %v", i, r.Value, r.Err)
		}
	}
	there.Close()
	if err := c.join(pong); err != nil {
		return err
	}
	r := syncAwait(c, core.Future[core.Result[int]](backRx.Recv()))
	return syncCheck(errors.Is(r.Err, mpsc.ErrClosed), "after close: %v, %v", r.Value, r.Err)
}

func testSyncFanIn(c *syncCtx) error {
	const producers, per = 4, 2500
	tx, rx := mpsc.New[[2]int](16)
	var hs []*core.JoinHandle[error]
	for p := 0; p < producers; p++ {
		ptx := tx.Clone()
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			defer ptx.Close()
			var send mpsc.SendFuture[[2]int]
			for i := 0; i < per; i++ {
				if err := syncAwait(c, core.Future[error](ptx.SendInto(&send, [2]int{p, i}))); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	tx.Close()
	next := make([]int, producers)
	total := 0
	for {
		r := syncAwait(c, core.Future[core.Result[[2]int]](rx.Recv()))
		if r.Err != nil {
			if !errors.Is(r.Err, mpsc.ErrClosed) {
				return r.Err
			}
			break
		}
		p, i := r.Value[0], r.Value[1]
		if i != next[p] {
			return fmt.Errorf("producer %d: got message %d, want %d", p, i, next[p])
		}
		next[p]++
		total++
	}
	if err := c.joinAll(hs); err != nil {
		return err
	}
	return syncCheck(total == producers*per, "received %d of %d", total, producers*per)
}

func testSyncRecvBudget(c *syncCtx) error {
	const total = 1000
	tx, rx := mpsc.NewUnbounded[int]()
	for i := 0; i < total; i++ {
		if err := tx.Send(i); err != nil {
			return err
		}
	}
	tx.Close()
	var perPoll []int
	h := c.spawn(func(c *syncCtx) error {
		n, want := 0, 0
		for {
			r, waited := syncAwaitMarked(c, core.Future[core.Result[int]](rx.Recv()), nil)
			if waited {
				perPoll = append(perPoll, n)
				n = 0
			}
			if r.Err != nil {
				perPoll = append(perPoll, n)
				return syncCheck(want == total, "closed after %d messages", want)
			}
			if r.Value != want {
				return fmt.Errorf("got %d, want %d", r.Value, want)
			}
			want++
			n++
		}
	})
	if err := c.join(h); err != nil {
		return err
	}
	return syncCheckBudget("receives", perPoll, total)
}

func testSyncRecvAbandoned(c *syncCtx) error {
	const total = 600
	tx, rx := mpsc.New[int](4)
	var nudge wsync.Notify
	producer := c.spawn(func(c *syncCtx) error {
		defer tx.Close()
		var send mpsc.SendFuture[int]
		for i := 0; i < total; i++ {
			if err := syncAwait(c, core.Future[error](tx.SendInto(&send, i))); err != nil {
				return err
			}
			// Wake the consumer twice: through the message and through
			// the notify racing it, so its receive is often dropped
			// right after it was woken for a message.
			nudge.NotifyOneFrom(c.cx)
			if i%7 == 0 {
				c.yieldNow()
			}
		}
		return nil
	})
	want, abandoned := 0, 0
	for {
		sel := future.Select2[core.Result[int], core.Unit](rx.Recv(), nudge.Notified())
		e := syncAwait(c, sel)
		if e.Index != 0 {
			abandoned++
			continue
		}
		r := e.First
		if r.Err != nil {
			if !errors.Is(r.Err, mpsc.ErrClosed) {
				return r.Err
			}
			break
		}
		if r.Value != want {
			return fmt.Errorf("got %d, want %d (after %d abandoned receives)", r.Value, want, abandoned)
		}
		want++
	}
	if err := c.join(producer); err != nil {
		return err
	}
	return syncCheck(want == total, "received %d of %d", want, total)
}

func testSyncSendAborted(c *syncCtx) error {
	const n, capacity = 90, 2
	tx, rx := mpsc.New[int](capacity)
	for i := 0; i < capacity; i++ {
		if err := tx.TrySend(-1); err != nil {
			return err
		}
	}
	var sent [n]atomic.Bool
	hs := c.spawnQueued(n, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		ptx := tx.Clone()
		return func(c *syncCtx) error {
			defer ptx.Close()
			err, _ := syncAwaitMarked(c, core.Future[error](ptx.Send(i)), queued)
			if err != nil {
				return err
			}
			sent[i].Store(true)
			return nil
		}
	})
	// Make room one message at a time, which grants the head sender, and
	// abort every third sender in the same poll, until every sender has
	// finished (sent or been cancelled).
	received := map[int]int{}
	finished := func() bool {
		for _, h := range hs {
			if !h.IsFinished() {
				return false
			}
		}
		return true
	}
	for k := 0; ; {
		v, err := rx.TryRecv()
		if errors.Is(err, mpsc.ErrEmpty) {
			if finished() {
				break
			}
			c.yieldNow()
			continue
		}
		if err != nil {
			return err
		}
		received[v]++
		if k%3 == 0 && k < n {
			hs[k].Abort()
		}
		k++
	}
	for i, h := range hs {
		if err := c.join(h); err != nil && !(i%3 == 0 && core.IsCancelled(err)) {
			return fmt.Errorf("sender %d: %v", i, err)
		}
	}
	tx.Close()
	for {
		r := syncAwait(c, core.Future[core.Result[int]](rx.Recv()))
		if r.Err != nil {
			if !errors.Is(r.Err, mpsc.ErrClosed) {
				return r.Err
			}
			break
		}
		received[r.Value]++
	}
	for i := 0; i < n; i++ {
		if received[i] > 1 {
			return fmt.Errorf("message %d received %d times", i, received[i])
		}
		if sent[i].Load() != (received[i] == 1) {
			return fmt.Errorf("message %d: send completed %v, received %d times", i, sent[i].Load(), received[i])
		}
	}
	// Every permit of an aborted send came back.
	return syncCheck(tx.Capacity() == capacity, "capacity %d after draining, want %d", tx.Capacity(), capacity)
}

func testSyncUnbounded(c *syncCtx) error {
	const producers, per = 3, 3000
	tx, rx := mpsc.NewUnbounded[int]()
	var hs []*core.JoinHandle[error]
	for p := 0; p < producers; p++ {
		ptx := tx.Clone()
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			defer ptx.Close()
			for i := 0; i < per; i++ {
				if err := ptx.SendFrom(c.cx, i); err != nil {
					return err
				}
				if i%100 == 0 {
					c.yieldNow()
				}
			}
			return nil
		}))
	}
	tx.Close()
	var buf []int
	total := 0
	for {
		res := syncAwait(c, core.Future[core.Result[[]int]](rx.RecvMany(buf[:0], 64)))
		if res.Err != nil {
			if !errors.Is(res.Err, mpsc.ErrClosed) {
				return res.Err
			}
			break
		}
		buf = res.Value
		total += len(buf)
	}
	if err := c.joinAll(hs); err != nil {
		return err
	}
	return syncCheck(total == producers*per, "received %d of %d", total, producers*per)
}

// --- broadcast and watch ---

func testSyncBroadcast(c *syncCtx) error {
	const receivers, total = 4, 300
	tx, first := broadcast.New[int](512)
	rxs := []*broadcast.Receiver[int]{first}
	for i := 1; i < receivers; i++ {
		rxs = append(rxs, tx.Subscribe())
	}
	var hs []*core.JoinHandle[error]
	for _, rx := range rxs {
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			for want := 0; ; want++ {
				r := syncAwait(c, core.Future[core.Result[int]](rx.Recv()))
				if r.Err != nil {
					if !errors.Is(r.Err, broadcast.ErrClosed) {
						return r.Err
					}
					return syncCheck(want == total, "closed after %d of %d", want, total)
				}
				if r.Value != want {
					return fmt.Errorf("got %d, want %d", r.Value, want)
				}
			}
		}))
	}
	for i := 0; i < total; i++ {
		if _, err := tx.SendFrom(c.cx, i); err != nil {
			return err
		}
		if i%16 == 0 {
			c.yieldNow()
		}
	}
	tx.Close()
	return c.joinAll(hs)
}

func testSyncBroadcastLag(c *syncCtx) error {
	tx, rx := broadcast.New[int](4)
	var go1 wsync.Notify
	h := c.spawn(func(c *syncCtx) error {
		syncAwait(c, core.Future[core.Unit](go1.Notified()))
		r := syncAwait(c, core.Future[core.Result[int]](rx.Recv()))
		var lag broadcast.LaggedError
		if !errors.As(r.Err, &lag) || lag.Missed != 16 {
			return fmt.Errorf("first receive after 20 sends into 4 slots: %v, %v", r.Value, r.Err)
		}
		for want := 16; want < 20; want++ {
			r := syncAwait(c, core.Future[core.Result[int]](rx.Recv()))
			if r.Err != nil || r.Value != want {
				return fmt.Errorf("got %d, %v, want %d", r.Value, r.Err, want)
			}
		}
		return nil
	})
	for i := 0; i < 20; i++ {
		if _, err := tx.SendFrom(c.cx, i); err != nil {
			return err
		}
	}
	go1.NotifyOneFrom(c.cx)
	return c.join(h)
}

func testSyncWatch(c *syncCtx) error {
	const receivers, last = 4, 400
	tx, first := watch.New(0)
	rxs := []*watch.Receiver[int]{first}
	for i := 1; i < receivers; i++ {
		rxs = append(rxs, tx.Subscribe())
	}
	var hs []*core.JoinHandle[error]
	for _, rx := range rxs {
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			prev := 0
			for {
				if err := syncAwait(c, core.Future[error](rx.Changed())); err != nil {
					if !errors.Is(err, watch.ErrClosed) {
						return err
					}
					return syncCheck(prev == last, "ended on %d, want %d", prev, last)
				}
				v := rx.BorrowAndUpdate()
				if v < prev {
					return fmt.Errorf("value went back from %d to %d", prev, v)
				}
				prev = v
			}
		}))
	}
	for i := 1; i <= last; i++ {
		if err := tx.SendFrom(c.cx, i); err != nil {
			return err
		}
		if i%10 == 0 {
			c.yieldNow()
		}
	}
	tx.Close()
	return c.joinAll(hs)
}

// --- all together ---

func testSyncChaos(c *syncCtx) error {
	const workers, rounds, permits, capacity = 40, 30, 3, 4
	sem := wsync.NewSemaphore(permits)
	var m wsync.Mutex
	var holders, overlaps, sent atomic.Int64
	tx, rx := mpsc.New[int](capacity)
	consumer := c.spawn(func(c *syncCtx) error {
		n := 0
		for {
			r := syncAwait(c, core.Future[core.Result[int]](rx.Recv()))
			if r.Err != nil {
				if got := sent.Load(); int64(n) != got {
					return fmt.Errorf("received %d messages, %d sends completed", n, got)
				}
				return nil
			}
			n++
		}
	})
	hs := make([]*core.JoinHandle[error], workers)
	txs := make([]*mpsc.Sender[int], workers)
	for w := range hs {
		wtx := tx.Clone()
		txs[w] = wtx
		hs[w] = c.spawn(func(c *syncCtx) error {
			// Whatever an abort interrupts, the unwinding body gives back
			// what it holds: the Go way of a destructor. (A worker aborted
			// before it ever ran has no body to unwind; the root closes
			// its sender.)
			defer wtx.Close()
			var acq wsync.AcquireFuture
			var lock wsync.LockFuture
			var send mpsc.SendFuture[int]
			for r := 0; r < rounds; r++ {
				switch (w + r) % 3 {
				case 0:
					n := 1 + (w+r)%permits
					if err := syncAwait(c, core.Future[error](sem.AcquireInto(&acq, n))); err != nil {
						return err
					}
					func() {
						defer sem.Release(n)
						c.yieldNow()
					}()
				case 1:
					syncAwait(c, core.Future[core.Unit](m.LockInto(&lock)))
					func() {
						defer m.Unlock()
						if holders.Add(1) != 1 {
							overlaps.Add(1)
						}
						defer holders.Add(-1)
						c.yieldNow()
					}()
				case 2:
					if err := syncAwait(c, core.Future[error](wtx.SendInto(&send, w))); err != nil {
						return err
					}
					sent.Add(1)
				}
			}
			return nil
		})
	}
	tx.Close()
	// Abort every fourth worker, at a different point of its life each.
	for w := 0; w < workers; w += 4 {
		for k := 0; k < w%5; k++ {
			c.yieldNow()
		}
		hs[w].Abort()
	}
	for w, h := range hs {
		if err := c.join(h); err != nil && !(w%4 == 0 && core.IsCancelled(err)) {
			return fmt.Errorf("worker %d: %v", w, err)
		}
		txs[w].Close()
	}
	if err := c.join(consumer); err != nil {
		return err
	}
	if err := syncCheck(overlaps.Load() == 0, "the mutex had two holders %d times", overlaps.Load()); err != nil {
		return err
	}
	if err := syncCheck(sem.Available() == permits, "%d of %d permits are back", sem.Available(), permits); err != nil {
		return err
	}
	if !m.TryLock() {
		return errors.New("the mutex is still held after every worker finished")
	}
	m.Unlock()
	return syncCheck(tx.Capacity() == capacity, "channel capacity %d of %d after the consumer drained it", tx.Capacity(), capacity)
}

// --- runtime shutdown and leaks ---

func testSyncShutdown(t *testing.T, configure func(*rt.Builder)) {
	r := syncRuntime(t, configure)
	s := wsync.NewSemaphore(3)
	var m wsync.Mutex
	tx, rx := mpsc.New[int](1)
	var queued [8]atomic.Bool
	syncRun(t, r, func(c *syncCtx) error {
		if err := s.TryAcquire(1); err != nil {
			return err
		}
		m.TryLock()
		if err := tx.TrySend(0); err != nil {
			return err
		}
		// Tasks waiting on every primitive, one holding part of its
		// permits (it asked for three, two were free).
		c.spawn(func(c *syncCtx) error {
			syncAwaitMarked(c, core.Future[error](s.Acquire(3)), &queued[0])
			return nil
		})
		c.spawn(func(c *syncCtx) error {
			syncAwaitMarked(c, core.Future[core.Unit](m.Lock()), &queued[1])
			return nil
		})
		c.spawn(func(c *syncCtx) error {
			syncAwaitMarked(c, core.Future[error](tx.Send(1)), &queued[2])
			return nil
		})
		for i := range 3 {
			c.until(queued[i].Load)
		}
		return nil
	})
	require.Equal(t, 0, s.Available(), "the waiting acquire holds the two free permits")
	require.NoError(t, r.Shutdown(syncHangLimit()))
	require.Equal(t, 2, s.Available(), "shutdown dropped the waiting acquire, which gave its permits back")
	m.Unlock()
	require.True(t, m.TryLock(), "the dropped lock waiter left the queue")
	_, err := rx.TryRecv()
	require.NoError(t, err)
	require.Equal(t, 1, tx.Capacity(), "the dropped send left the queue without sending")
	_, err = rx.TryRecv()
	require.ErrorIs(t, err, mpsc.ErrEmpty)
}

func testSyncNoLeak(t *testing.T, configure func(*rt.Builder)) {
	ignore := goleak.IgnoreCurrent()
	b := rt.NewBuilder().IgnoreEnv()
	if configure != nil {
		configure(b)
	}
	r, err := b.Build()
	require.NoError(t, err)
	tx, rx := mpsc.New[int](1)
	var n wsync.Notify
	syncRun(t, r, func(c *syncCtx) error {
		c.spawn(func(c *syncCtx) error { // waits forever; cancelled by Close
			syncAwait(c, core.Future[core.Unit](n.Notified()))
			return nil
		})
		c.spawn(func(c *syncCtx) error {
			syncAwait(c, core.Future[error](tx.Send(1)))
			syncAwait(c, core.Future[error](tx.Send(2)))
			return nil
		})
		r := syncAwait(c, core.Future[core.Result[int]](rx.Recv()))
		return syncCheck(r.Value == 1, "got %v", r.Value)
	})
	require.NoError(t, r.Close())
	goleak.VerifyNone(t, ignore)
}
