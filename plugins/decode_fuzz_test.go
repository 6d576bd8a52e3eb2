package plugins

import (
	"errors"
	"log/slog"
	"math"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/plugins/internal/wire"
)

// The host's decoders of the plugin's frames, fuzzed: the driver's
// completions, the timer's replies and the policy's answers, as a hostile
// plugin could send them. None panics or allocates beyond the frame's
// size; a malformed frame is an error matching errProtocol that says what
// was wrong; and no operation, entry or answer is lost: what a frame does
// not complete stays pending for the session's end to fail.

var discard = slog.New(slog.DiscardHandler)

// driverOps are the operations pending in each fuzzed driver: one of each
// code, with the host's ids 1, 2, ... in this order.
var driverOps = []byte{
	wire.OpListen, wire.OpAccept, wire.OpConnect, wire.OpRead, wire.OpWrite,
	wire.OpShutdown, wire.OpSetOption, wire.OpLocalAddr, wire.OpPeerAddr,
	wire.OpCloseHandle, wire.OpBind, wire.OpConnectDatagram, wire.OpRecvFrom,
	wire.OpSendTo, wire.OpJoinGroup,
}

// syncOp reports whether the driver runs op as a round trip on the
// caller's goroutine.
func syncOp(op byte) bool {
	switch op {
	case wire.OpAccept, wire.OpConnect, wire.OpRead, wire.OpWrite, wire.OpRecvFrom, wire.OpSendTo:
		return false
	}
	return true
}

// fuzzDriver returns a driver with a session of generation 1, one open
// handle (the plugin's id 1) and the operations of driverOps pending, the
// asynchronous ones with a cost of 64 bytes; a write-behind write and a
// dropped read follow them.
func fuzzDriver() (*Driver, *session, []*hostOp) {
	d := &Driver{name: "fuzz", log: discard, parkCh: make(chan struct{}, 1),
		ops: map[uint64]*hostOp{}, handles: map[core.Handle]*hostHandle{}}
	s := &session{gen: 1}
	d.sess, d.gen = s, 1
	h := stamp(1, 1)
	d.handles[h] = &hostHandle{wbytes: 64}
	var ops []*hostOp
	add := func(o *hostOp) {
		d.nextID++
		o.id, o.h = d.nextID, h
		if o.sync == nil {
			o.cost = 64
			d.inflight++
			d.inBytes += o.cost
		}
		d.ops[o.id] = o
		ops = append(ops, o)
	}
	for _, op := range driverOps {
		o := &hostOp{op: op}
		if syncOp(op) {
			o.sync = make(chan struct{})
		}
		add(o)
	}
	add(&hostOp{op: wire.OpWrite, behind: true, state: opDone})
	add(&hostOp{op: wire.OpRead, state: opDropped})
	return d, s, ops
}

func FuzzDriverCompletionFrame(f *testing.F) {
	var e wire.Enc
	e.Uint(1) // the listen: handle 2, an address
	e.U8(wire.StatusOK)
	e.Uint(2)
	e.PutAddr(core.Addr{Net: "tcp", Addr: "127.0.0.1:80"})
	e.Uint(4) // the read: 5 bytes
	e.U8(wire.StatusOK)
	e.Bytes([]byte("hello"))
	e.Uint(14) // the send: an error
	e.U8(wire.StatusErr)
	e.PutError(errors.New("no route"))
	e.Uint(16) // the write-behind write
	e.U8(wire.StatusOK)
	e.Uint(0)
	f.Add(e.B)
	var bad wire.Enc // a handle id in the generation's bits, a huge count
	bad.Uint(3)
	bad.U8(wire.StatusOK)
	bad.Uint(1 << 63)
	bad.Uint(5)
	bad.U8(wire.StatusOK)
	bad.Uint(1 << 62)
	f.Add(bad.B)
	var refusal wire.Enc
	refusal.Uint(0)
	refusal.U8(wire.StatusErr)
	refusal.PutError(errors.New("weft plugin wire: malformed frame: unknown operation 9"))
	f.Add(refusal.B)
	f.Fuzz(func(t *testing.T, frame []byte) {
		d, s, ops := fuzzDriver()
		err := d.apply(s, frame)
		if err != nil && (!errors.Is(err, errProtocol) || len(err.Error()) <= len("protocol error: ")) {
			t.Fatalf("%v: want a protocol error saying what was wrong", err)
		}
		for _, o := range ops {
			if d.ops[o.id] == o {
				continue // pending: the session's end fails it
			}
			completed := o.state != opPending
			if o.sync != nil {
				select {
				case <-o.sync:
					completed = true
				default:
					completed = false
				}
			}
			if !completed {
				t.Fatalf("operation %d (op %d) left the table without completing", o.id, o.op)
			}
			if o.err != nil {
				continue
			}
			if o.n < 0 || o.n > o.cost || len(o.data) > o.cost {
				t.Fatalf("operation %d of %d bytes completed with %d (%d bytes of data)", o.id, o.cost, o.n, len(o.data))
			}
			if o.handle != 0 {
				gen, wh := unstamp(o.handle)
				if gen != s.gen || wh == 0 || d.handles[o.handle] == nil {
					t.Fatalf("operation %d returned handle %#x", o.id, o.handle)
				}
			}
		}
	})
}

// countingWaker counts its wakes.
type countingWaker struct{ n *atomic.Int64 }

func (w countingWaker) Wake() { w.n.Add(1) }

func FuzzTimerReplyFrame(f *testing.F) {
	var e wire.Enc
	e.U8(wire.TimerHello)
	e.Uint(uint64(1e6))
	e.U8(wire.TimerFired)
	e.Uint(1)
	e.Uint(2)
	e.Uint(1)
	e.Uint(3)
	e.Bool(true)
	e.Int(5000)
	f.Add(e.B)
	var bad wire.Enc // a negative resolution, 2^62 ids
	bad.U8(wire.TimerHello)
	bad.Uint(1 << 63)
	bad.U8(wire.TimerFired)
	bad.Uint(1)
	bad.Uint(1 << 62)
	f.Add(bad.B)
	f.Add([]byte{wire.TimerFired, 1, 0, 7, 0})
	f.Fuzz(func(t *testing.T, frame []byte) {
		tp := &TimerPlugin{name: "fuzz", log: discard}
		st := &stream{}
		tm := &Timer{tp: tp, armed: map[uint64]*core.TimerEntry{}, st: st, cached: math.MaxInt64, hello: make(chan struct{})}
		var woken atomic.Int64
		entries := make([]*core.TimerEntry, 4)
		for i := range entries {
			e := &core.TimerEntry{Deadline: core.Instant(i * 1000)}
			e.Waker.Register(countingWaker{&woken})
			entries[i] = e
			tm.armLocked(e)
		}
		w := &fireWait{seq: 1, st: st, after: math.MaxInt64, ch: make(chan fireResult, 1)}
		tm.waits = []*fireWait{w}
		err := tm.onFrame(st, frame)
		if err != nil && (!errors.Is(err, errProtocol) || !errors.Is(err, wire.ErrMalformed)) {
			t.Fatalf("%v: want a protocol error saying what was wrong", err)
		}
		if tm.res < 0 {
			t.Fatalf("a negative resolution %v", tm.res)
		}
		// Every entry is armed still, or expired with its waker handed
		// to the waiting Fire or woken.
		select {
		case r := <-w.ch:
			r.wake()
		default:
		}
		expired := 0
		for _, e := range entries {
			if spi.LinksOf(e).Owner == nil {
				expired++
			}
		}
		if woken.Load() != int64(expired) {
			t.Fatalf("%d entries expired, %d wakers woken", expired, woken.Load())
		}
		if expired+tm.Len() != len(entries) {
			t.Fatalf("%d expired and %d armed of %d", expired, tm.Len(), len(entries))
		}
	})
}

func FuzzPolicyAnswerFrame(f *testing.F) {
	var e wire.Enc
	e.Uint(1)
	e.Uint(3)
	e.Uint(7)
	e.Uint(2)
	e.Uint(9)
	e.Uint(2)
	e.Uint(1)
	e.Uint(4)
	f.Add(e.B)
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, frame []byte) {
		const maxDecision = 16
		s := &remotePolicy{answerCh: make(chan struct{}, 1)}
		s.opts.MaxDecision = maxDecision
		st := &stream{}
		s.st = st
		err := s.onFrame(st, frame)
		if err != nil {
			if !errors.Is(err, errProtocol) || !errors.Is(err, wire.ErrMalformed) {
				t.Fatalf("%v: want a protocol error saying what was wrong", err)
			}
			if s.ansSeq != 0 {
				t.Fatal("a malformed frame's answer was taken")
			}
			return
		}
		if len(s.ans) > maxDecision {
			t.Fatalf("an answer of %d ids, more than the %d asked", len(s.ans), maxDecision)
		}
	})
}
