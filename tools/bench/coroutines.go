package bench

import (
	"errors"
	"fmt"
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
