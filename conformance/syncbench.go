package conformance

import (
	"sync"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/runtime/rt"
)

// This file holds the channel workloads of BENCHMARKS.md, W4 (ping_pong)
// and W6 (mpsc_fan_in), on weft and, side by side, on plain Go, so that a
// scheduler module runs both in the same process:
//
//	func BenchmarkW4PingPong(b *testing.B)   { conformance.ChannelPingPong(b, configure) }
//	func BenchmarkW4GoPingPong(b *testing.B) { conformance.GoChannelPingPong(b) }
//
// One benchmark op is one round trip (W4) or one message (W6). The runtime
// is built outside the timed region; everything else, spawning the tasks
// included, is timed. Besides ns/op each benchmark reports cpu-ns/op, the
// CPU time of the whole process (every thread) per op: on a shared machine
// it separates what a workload costs from how much of the machine it got.

// syncCPUMeter reports the process CPU time per op of the timed region
// when it ends. Use it as: defer syncCPUMeter(b)().
func syncCPUMeter(b *testing.B) func() {
	start, ok := syncCPUTime()
	return func() {
		end, ok2 := syncCPUTime()
		if ok && ok2 && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// syncBenchRuntime builds the runtime a channel benchmark runs on.
func syncBenchRuntime(b *testing.B, configure func(*rt.Builder)) *rt.Runtime {
	b.Helper()
	bld := rt.NewBuilder().IgnoreEnv()
	if configure != nil {
		configure(bld)
	}
	r, err := bld.Build()
	if err != nil {
		b.Fatalf("building runtime: %v", err)
	}
	b.Cleanup(func() { _ = r.Close() })
	return r
}

// ChannelPingPong is W4 on weft: two tasks bounce a message b.N times
// through two bounded(1) mpsc channels. Each task keeps its SendFuture in
// its own state, so a round trip allocates nothing.
func ChannelPingPong(b *testing.B, configure func(*rt.Builder)) {
	r := syncBenchRuntime(b, configure)
	b.ReportAllocs()
	b.ResetTimer()
	defer syncCPUMeter(b)()
	n := b.N
	there, thereRx := mpsc.New[int](1)
	back, backRx := mpsc.New[int](1)
	ping := &pingTask{tx: there, rx: backRx, n: n}
	pong := &pongTask{tx: back, rx: thereRx}
	got, err := rt.BlockOn(r, core.Future[int](&spawnBoth{a: ping, b: pong}))
	if err != nil || got != n {
		b.Fatalf("ping-pong: %d round trips, %v", got, err)
	}
}

// spawnBoth spawns a and b and completes when both have, with a's value.
type spawnBoth struct {
	a, b   core.Future[int]
	ha, hb *core.JoinHandle[int]
}

func (s *spawnBoth) Poll(cx *core.Context) (int, bool) {
	if s.ha == nil {
		s.ha = core.Spawn(cx, s.a)
		s.hb = core.Spawn(cx, s.b)
	}
	ra, ok := s.ha.Poll(cx)
	if !ok {
		return 0, false
	}
	if _, ok := s.hb.Poll(cx); !ok {
		return 0, false
	}
	if ra.Err != nil {
		panic(ra.Err)
	}
	return ra.Value, true
}

// pingTask sends i, waits for the echo, n times, then closes its sender.
type pingTask struct {
	tx      *mpsc.Sender[int]
	rx      *mpsc.Receiver[int]
	send    mpsc.SendFuture[int]
	n, i    int
	sending bool
	waiting bool
}

func (p *pingTask) Poll(cx *core.Context) (int, bool) {
	for {
		switch {
		case p.sending:
			err, ok := p.send.Poll(cx)
			if !ok {
				return 0, false
			}
			if err != nil {
				panic(err)
			}
			p.sending, p.waiting = false, true
		case p.waiting:
			res, ok := p.rx.Recv().Poll(cx)
			if !ok {
				return 0, false
			}
			if res.Err != nil || res.Value != p.i {
				panic("ping-pong: wrong echo")
			}
			p.waiting = false
			p.i++
		default:
			if p.i == p.n {
				p.tx.Close()
				return p.i, true
			}
			p.tx.SendInto(&p.send, p.i)
			p.sending = true
		}
	}
}

// pongTask echoes every message until its channel closes.
type pongTask struct {
	tx      *mpsc.Sender[int]
	rx      *mpsc.Receiver[int]
	send    mpsc.SendFuture[int]
	sending bool
	n       int
}

func (p *pongTask) Poll(cx *core.Context) (int, bool) {
	for {
		if p.sending {
			err, ok := p.send.Poll(cx)
			if !ok {
				return 0, false
			}
			if err != nil {
				panic(err)
			}
			p.sending = false
		}
		res, ok := p.rx.Recv().Poll(cx)
		if !ok {
			return 0, false
		}
		if res.Err != nil {
			p.tx.Close()
			return p.n, true
		}
		p.n++
		p.tx.SendInto(&p.send, res.Value)
		p.sending = true
	}
}

// GoChannelPingPong is W4 on plain Go: two goroutines bounce a message b.N
// times through two channels of capacity 1.
func GoChannelPingPong(b *testing.B) {
	b.ReportAllocs()
	defer syncCPUMeter(b)()
	n := b.N
	there, back := make(chan int, 1), make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range there {
			back <- v
		}
	}()
	for i := 0; i < n; i++ {
		there <- i
		if <-back != i {
			b.Fatal("ping-pong: wrong echo")
		}
	}
	close(there)
	<-done
}

// FanInProducers is the number of producers of W6.
const FanInProducers = 4

// FanInCapacity is the capacity of W6's channel.
const FanInCapacity = 1024

// ChannelFanIn is W6 on weft: FanInProducers tasks send b.N messages in
// total into one bounded(FanInCapacity) channel that one task receives
// from. Producers keep their SendFuture in their state.
func ChannelFanIn(b *testing.B, configure func(*rt.Builder)) {
	r := syncBenchRuntime(b, configure)
	b.ReportAllocs()
	b.ResetTimer()
	defer syncCPUMeter(b)()
	tx, rx := mpsc.New[int](FanInCapacity)
	root := &fanInRoot{rx: rx}
	per := b.N / FanInProducers
	for p := 0; p < FanInProducers; p++ {
		n := per
		if p == 0 {
			n += b.N % FanInProducers
		}
		ptx := tx
		if p > 0 {
			ptx = tx.Clone()
		}
		root.producers = append(root.producers, &fanInProducer{tx: ptx, n: n})
	}
	got, err := rt.BlockOn(r, core.Future[int](root))
	if err != nil || got != b.N {
		b.Fatalf("fan-in: received %d of %d, %v", got, b.N, err)
	}
}

// fanInRoot spawns the producers and is the consumer.
type fanInRoot struct {
	rx        *mpsc.Receiver[int]
	producers []*fanInProducer
	spawned   bool
	n         int
}

func (f *fanInRoot) Poll(cx *core.Context) (int, bool) {
	if !f.spawned {
		f.spawned = true
		for _, p := range f.producers {
			core.Spawn(cx, core.Future[core.Unit](p))
		}
	}
	for {
		res, ok := f.rx.Recv().Poll(cx)
		if !ok {
			return 0, false
		}
		if res.Err != nil {
			return f.n, true
		}
		f.n++
	}
}

type fanInProducer struct {
	tx      *mpsc.Sender[int]
	send    mpsc.SendFuture[int]
	n, i    int
	sending bool
}

func (p *fanInProducer) Poll(cx *core.Context) (core.Unit, bool) {
	for {
		if p.sending {
			err, ok := p.send.Poll(cx)
			if !ok {
				return core.Unit{}, false
			}
			if err != nil {
				panic(err)
			}
			p.sending = false
			p.i++
		}
		if p.i == p.n {
			p.tx.Close()
			return core.Unit{}, true
		}
		p.tx.SendInto(&p.send, p.i)
		p.sending = true
	}
}

// GoChannelFanIn is W6 on plain Go: FanInProducers goroutines send b.N
// messages in total into one channel of capacity FanInCapacity that the
// benchmark goroutine receives from.
func GoChannelFanIn(b *testing.B) {
	b.ReportAllocs()
	defer syncCPUMeter(b)()
	ch := make(chan int, FanInCapacity)
	var wg sync.WaitGroup
	per := b.N / FanInProducers
	for p := 0; p < FanInProducers; p++ {
		n := per
		if p == 0 {
			n += b.N % FanInProducers
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n; i++ {
				ch <- i
			}
		}()
	}
	go func() { wg.Wait(); close(ch) }()
	got := 0
	for range ch {
		got++
	}
	if got != b.N {
		b.Fatalf("fan-in: received %d of %d", got, b.N)
	}
}
