package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/runtime/rt"
)

// W12c fan_in_select as coroutines: W6's fan-in (fanInProducers producers
// send n messages in all into one bounded(fanInCapacity) channel, one
// consumer) written as coroutine tasks, with the consumer in a select
// loop, as a real program would write it: each round selects between the
// receive and the program's context (done), kept armed across the
// iterations (co.Keep). The plain-Go side is the same program with
// goroutines and a Go select over the channel and ctx.Done(). ns/message.

// weftFanInSelect is W12c on r.
func weftFanInSelect(r *rt.Runtime, n int) (float64, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	received, err := co.Main(r, func(c *co.Ctx) (int, error) {
		tx, rx := mpsc.New[int](fanInCapacity)
		consumer := co.Go(c, func(c *co.Ctx) int {
			done := co.ContextDone(ctx)
			defer core.Drop(done)
			var msg core.Result[int]
			received := 0
			for {
				switch co.Select(c, co.Case(rx.Recv(), &msg), co.Keep(done, nil)) {
				case 0:
					if msg.Err != nil {
						return received
					}
					received += msg.Value
				case 1:
					return received
				}
			}
		})
		producers := make([]*core.JoinHandle[error], fanInProducers)
		for g := range producers {
			ptx := tx.Clone()
			ops := share(n, fanInProducers, g)
			producers[g] = co.Go(c, func(c *co.Ctx) error {
				defer ptx.Close()
				var send mpsc.SendFuture[int]
				for range ops {
					if err := co.Await(c, ptx.SendInto(&send, 1)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		tx.Close()
		var errs error
		for _, p := range producers {
			e, j := co.AwaitResult(c, p)
			errs = errors.Join(errs, e, j)
		}
		got, j := co.AwaitResult(c, consumer)
		return got, errors.Join(errs, j)
	})
	el := time.Since(start)
	if err == nil && received != n {
		err = fmt.Errorf("received %d messages, want %d", received, n)
	}
	return perOp(el, n), err
}

// goFanInSelect is W12c's plain-Go side: W6's goroutines, the consumer in
// a select over the channel and ctx.Done().
func goFanInSelect(n int) (float64, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	ch := make(chan int, fanInCapacity)
	done := make(chan int)
	go func() {
		received := 0
		for {
			select {
			case v, ok := <-ch:
				if !ok {
					done <- received
					return
				}
				received += v
			case <-ctx.Done():
				done <- received
				return
			}
		}
	}()
	return goFanInFinish(start, ch, done, n)
}
