package bench

import (
	"errors"
	"fmt"
	"iter"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/runtime/rt"
)

// The coroutine workloads (W12 coroutine_spawn): W1 and W4 written as
// coroutine tasks (package lib/co), straight-line bodies that await
// futures, against the same plain-Go programs as W1 and W4.
//
//	W12a spawn_local as coroutines: inside one coroutine task, spawn n
//	     coroutine tasks; each increments the counter; the last one wakes
//	     the root. ns/task.
//	W12b ping_pong as coroutines: two coroutine tasks, n round trips
//	     through two bounded(1) channels. ns/round trip.
//
// Every coroutine task takes a coroutine from lib/co's pool when it first
// runs and returns it when it ends, as any program using co.Go does; the
// pool starts each run as the previous run left it (runs are separated by
// a fresh runtime, not by emptying the pool).

// weftCoroutineSpawn is W12a on r.
func weftCoroutineSpawn(r *rt.Runtime, n int) (float64, error) {
	start := time.Now()
	_, err := co.Main(r, func(c *co.Ctx) (core.Unit, error) {
		cnt := newCounter(n)
		for range n {
			co.Go(c, func(c *co.Ctx) core.Unit {
				cnt.add(c.Context())
				return core.Unit{}
			})
		}
		return co.Await(c, core.Future[core.Unit](cnt)), nil
	})
	return perOp(time.Since(start), n), err
}

// goCoroutineSpawn is W12a's plain-Go side: W1's goroutines.
func goCoroutineSpawn(n int) (float64, error) { return goSpawnLocal(n) }

// weftCoroutinePingPong is W12b on r. Each side keeps its send future
// (SendInto) and uses the receiver's own receive future, so a round trip
// allocates nothing, as in W4.
func weftCoroutinePingPong(r *rt.Runtime, n int) (float64, error) {
	start := time.Now()
	err := co.Run(r, func(c *co.Ctx) error {
		pingTx, pingRx := mpsc.New[int](1)
		pongTx, pongRx := mpsc.New[int](1)
		ponger := co.Go(c, func(c *co.Ctx) error {
			var send mpsc.SendFuture[int]
			for {
				v, err := co.AwaitResult(c, core.Future[core.Result[int]](pingRx.Recv()))
				if err != nil {
					pongTx.Close()
					return nil
				}
				if err := co.Await(c, core.Future[error](pongTx.SendInto(&send, v))); err != nil {
					return fmt.Errorf("pong %d: %w", v, err)
				}
			}
		})
		pinger := co.Go(c, func(c *co.Ctx) error {
			var send mpsc.SendFuture[int]
			defer pingTx.Close()
			for i := range n {
				if err := co.Await(c, core.Future[error](pingTx.SendInto(&send, i))); err != nil {
					return fmt.Errorf("ping %d: %w", i, err)
				}
				v, err := co.AwaitResult(c, core.Future[core.Result[int]](pongRx.Recv()))
				if err == nil && v != i {
					err = fmt.Errorf("got %d back", v)
				}
				if err != nil {
					return fmt.Errorf("pong %d: %w", i, err)
				}
			}
			return nil
		})
		e1, j1 := co.AwaitResult(c, pinger)
		e2, j2 := co.AwaitResult(c, ponger)
		return errors.Join(e1, j1, e2, j2)
	})
	return perOp(time.Since(start), n), err
}

// goCoroutinePingPong is W12b's plain-Go side: W4's goroutines.
func goCoroutinePingPong(n int) (float64, error) { return goPingPong(n) }

// switching wraps a poll-driven task so that each of its polls also makes
// one round trip on a coroutine that does nothing (an iter.Pull next and
// the yield that returns from it): the coroutine switches a coroutine
// task costs, without anything else of lib/co.
type switching struct {
	f    core.Future[core.Unit]
	next func() (struct{}, bool)
	stop func()
}

func newSwitching(f core.Future[core.Unit]) *switching {
	s := &switching{f: f}
	s.next, s.stop = iter.Pull(func(yield func(struct{}) bool) {
		for yield(struct{}{}) {
		}
	})
	return s
}

func (s *switching) Poll(cx *core.Context) (core.Unit, bool) {
	s.next()
	v, ok := s.f.Poll(cx)
	if ok {
		s.stop()
	}
	return v, ok
}

// weftPingPongSwitchFloor is W4 with each task poll making one coroutine
// round trip (see switching): the floor under W12b, which is W4 as
// coroutine tasks. A task poll of W12b resumes the body and the body
// suspends, one round trip; everything W12b spends beyond this is lib/co's
// own.
func weftPingPongSwitchFloor(r *rt.Runtime, n int) (float64, error) {
	start := time.Now()
	pingTx, pingRx := mpsc.New[int](1)
	pongTx, pongRx := mpsc.New[int](1)
	c := newCounter(1)
	ping := &pinger{n: n, tx: pingTx, rx: pongRx, c: c}
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnAll{
		fs: []core.Future[core.Unit]{newSwitching(ping), newSwitching(&ponger{tx: pongTx, rx: pingRx})},
		c:  c,
	}))
	el := time.Since(start)
	return perOp(el, n), errors.Join(err, ping.err)
}
