package bench

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/runtime/rt"
)

// The channel workloads, on weft's bounded mpsc channels and on Go's
// buffered channels:
//
//	W4 ping_pong    two tasks, n round trips through two bounded(1)
//	                channels; ns per round trip.
//	W6 mpsc_fan_in  fanInProducers producer tasks send n messages in all
//	                into one bounded(fanInCapacity) channel, one consumer
//	                receives them; ns per message.
//
// W6's shape is the sync conformance kit's (conformance.FanInProducers,
// conformance.FanInCapacity). Senders keep their SendFuture in their state
// (SendInto), as a task that sends in a loop does. Tasks poll their channel
// futures in a loop; when a future is pending because the channel is not
// ready or the task's budget is spent, the task returns pending and resumes
// with the same future.
const (
	fanInProducers = conformance.FanInProducers
	fanInCapacity  = conformance.FanInCapacity
)

// pinger is W4's first task: it sends i, awaits the reply, n times, then
// closes its sender (which ends the ponger) and signals done.
type pinger struct {
	n, i    int
	tx      *mpsc.Sender[int]
	rx      *mpsc.Receiver[int]
	send    mpsc.SendFuture[int]
	sending bool
	recv    *mpsc.RecvFuture[int]
	c       *counter
	err     error
}

func (p *pinger) Poll(cx *core.Context) (core.Unit, bool) {
	for p.i < p.n {
		if p.recv == nil {
			if !p.sending {
				p.tx.SendInto(&p.send, p.i)
				p.sending = true
			}
			err, ok := p.send.Poll(cx)
			if !ok {
				return core.Unit{}, false
			}
			p.sending = false
			if err != nil {
				p.err = fmt.Errorf("ping %d: %w", p.i, err)
				break
			}
			p.recv = p.rx.Recv()
		}
		res, ok := p.recv.Poll(cx)
		if !ok {
			return core.Unit{}, false
		}
		p.recv = nil
		if res.Err == nil && res.Value != p.i {
			res.Err = fmt.Errorf("got %d back", res.Value)
		}
		if res.Err != nil {
			p.err = fmt.Errorf("pong %d: %w", p.i, res.Err)
			break
		}
		p.i++
	}
	p.tx.Close()
	p.c.add(cx)
	return core.Unit{}, true
}

// ponger is W4's second task: it sends back every message until the
// pinger closes the channel.
type ponger struct {
	tx      *mpsc.Sender[int]
	rx      *mpsc.Receiver[int]
	send    mpsc.SendFuture[int]
	sending bool
	recv    *mpsc.RecvFuture[int]
}

func (p *ponger) Poll(cx *core.Context) (core.Unit, bool) {
	for {
		if !p.sending {
			if p.recv == nil {
				p.recv = p.rx.Recv()
			}
			res, ok := p.recv.Poll(cx)
			if !ok {
				return core.Unit{}, false
			}
			p.recv = nil
			if res.Err != nil {
				// The pinger is done (or gave up).
				p.tx.Close()
				return core.Unit{}, true
			}
			p.tx.SendInto(&p.send, res.Value)
			p.sending = true
		}
		if _, ok := p.send.Poll(cx); !ok {
			return core.Unit{}, false
		}
		p.sending = false
	}
}

func weftPingPong(r *rt.Runtime, n int) (float64, error) {
	start := time.Now()
	pingTx, pingRx := mpsc.New[int](1)
	pongTx, pongRx := mpsc.New[int](1)
	c := newCounter(1)
	ping := &pinger{n: n, tx: pingTx, rx: pongRx, c: c}
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnAll{
		fs: []core.Future[core.Unit]{ping, &ponger{tx: pongTx, rx: pingRx}},
		c:  c,
	}))
	el := time.Since(start)
	return perOp(el, n), errors.Join(err, ping.err)
}

func goPingPong(n int) (float64, error) {
	start := time.Now()
	ping, pong := make(chan int, 1), make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		for v := range ping {
			pong <- v
		}
	}()
	go func() {
		var err error
		for i := range n {
			ping <- i
			if v := <-pong; v != i && err == nil {
				err = fmt.Errorf("pong %d: got %d back", i, v)
			}
		}
		close(ping)
		done <- err
	}()
	err := <-done
	return perOp(time.Since(start), n), err
}

// producer is a task of W6: it sends ops messages, then closes its
// sender handle.
type producer struct {
	ops, sent int
	tx        *mpsc.Sender[int]
	send      mpsc.SendFuture[int]
	sending   bool
	err       error
}

func (p *producer) Poll(cx *core.Context) (core.Unit, bool) {
	for p.sent < p.ops {
		if !p.sending {
			p.tx.SendInto(&p.send, 1)
			p.sending = true
		}
		err, ok := p.send.Poll(cx)
		if !ok {
			return core.Unit{}, false
		}
		p.sending = false
		if err != nil {
			p.err = err
			break
		}
		p.sent++
	}
	p.tx.Close()
	return core.Unit{}, true
}

// consumer is W6's receiving task: it receives until every producer has
// closed its handle, then signals done.
type consumer struct {
	rx       *mpsc.Receiver[int]
	recv     *mpsc.RecvFuture[int]
	received int
	c        *counter
}

func (t *consumer) Poll(cx *core.Context) (core.Unit, bool) {
	for {
		if t.recv == nil {
			t.recv = t.rx.Recv()
		}
		res, ok := t.recv.Poll(cx)
		if !ok {
			return core.Unit{}, false
		}
		t.recv = nil
		if res.Err != nil {
			t.c.add(cx)
			return core.Unit{}, true
		}
		t.received += res.Value
	}
}

func weftFanIn(r *rt.Runtime, n int) (float64, error) {
	start := time.Now()
	tx, rx := mpsc.New[int](fanInCapacity)
	c := newCounter(1)
	cons := &consumer{rx: rx, c: c}
	fs := []core.Future[core.Unit]{cons}
	var prods []*producer
	for g := range fanInProducers {
		p := &producer{ops: share(n, fanInProducers, g), tx: tx.Clone()}
		prods = append(prods, p)
		fs = append(fs, p)
	}
	tx.Close()
	_, err := rt.BlockOn(r, core.Future[core.Unit](&spawnAll{fs: fs, c: c}))
	el := time.Since(start)
	for _, p := range prods {
		err = errors.Join(err, p.err)
	}
	if err == nil && cons.received != n {
		err = fmt.Errorf("received %d messages, want %d", cons.received, n)
	}
	return perOp(el, n), err
}

func goFanIn(n int) (float64, error) {
	start := time.Now()
	ch := make(chan int, fanInCapacity)
	done := make(chan int)
	go func() {
		received := 0
		for v := range ch {
			received += v
		}
		done <- received
	}()
	return goFanInFinish(start, ch, done, n)
}

// goFanInFinish is the rest of W6's plain-Go side, shared with W12c's:
// the producers send n messages in all into ch, then ch is closed and the
// consumer reports on done how much it received.
func goFanInFinish(start time.Time, ch chan int, done chan int, n int) (float64, error) {
	var producers sync.WaitGroup
	for g := range fanInProducers {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for range share(n, fanInProducers, g) {
				ch <- 1
			}
		}()
	}
	producers.Wait()
	close(ch)
	received := <-done
	el := time.Since(start)
	if received != n {
		return 0, fmt.Errorf("received %d messages, want %d", received, n)
	}
	return perOp(el, n), nil
}
