package server

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
	"github.com/weftrt/weft/plugins/policy"
	"github.com/weftrt/weft/timers/wheel"
)

// The plugin side's decoders, fuzzed: the policy's requests, the timer's
// records and the driver's operations, as a hostile host could send them.
// None panics; a malformed frame is an error (or, for the driver, a
// refusal record) that says what was wrong and matches wire.ErrMalformed;
// what the plugin answers is well formed.

// policyRequest encodes one request of a policy frame.
func policyRequest(e *wire.Enc, seq, max uint64, events func(e *wire.Enc)) {
	var r wire.Enc
	r.Uint(seq)
	r.Uint(max)
	if events != nil {
		events(&r)
	}
	e.Bytes(r.B)
}

func FuzzPolicyRequestFrame(f *testing.F) {
	var e wire.Enc
	policyRequest(&e, 1, 4, func(e *wire.Enc) {
		e.U8(wire.EventSpawned)
		e.Uint(1)
		e.Int(5)
		e.String("main")
		e.U8(wire.EventSpawned)
		e.Uint(2)
		e.Int(-3)
		e.String("")
		e.U8(wire.EventWoken)
		e.Uint(1)
		e.Int(5)
	})
	policyRequest(&e, 2, 1, func(e *wire.Enc) {
		e.U8(wire.EventPolled)
		e.Uint(1)
		e.U8(wire.EventCompleted)
		e.Uint(1)
	})
	f.Add(e.B)
	var huge wire.Enc // the crash issue 14 reports: a max of 2^63
	policyRequest(&huge, 1, 1<<63, nil)
	f.Add(huge.B)
	f.Fuzz(func(t *testing.T, frame []byte) {
		var events []policy.Event
		var out wire.Enc
		err := answerFrame(policy.NewPriority(), frame, &events, &out)
		if err != nil {
			requireMalformed(t, err)
			return
		}
		// One answer per request, in order, each within its max.
		req, ans := wire.NewDec(frame), wire.NewDec(out.B)
		for req.More() {
			r := wire.NewDec(req.Bytes())
			seq, max := r.Uint(), r.Uint()
			if got := ans.Uint(); got != seq {
				t.Fatalf("answer %d to request %d", got, seq)
			}
			n := ans.Count("ids", int(max))
			for range n {
				ans.Uint()
			}
		}
		if ans.Err() != nil || ans.More() {
			t.Fatalf("the answers do not match the requests: %v", ans.Err())
		}
	})
}

func requireMalformed(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, wire.ErrMalformed) || !strings.HasPrefix(err.Error(), "protocol error") {
		t.Fatalf("%v: want a protocol error matching wire.ErrMalformed", err)
	}
}

func FuzzTimerRecordFrame(f *testing.F) {
	var e wire.Enc
	e.U8(wire.TimerSync)
	e.Int(1000)
	for id := range uint64(4) {
		e.U8(wire.TimerInsert)
		e.Uint(id + 1)
		e.Int(int64(id+1) * int64(time.Millisecond))
	}
	e.U8(wire.TimerCancel)
	e.Uint(2)
	e.U8(wire.TimerFire)
	e.Uint(1)
	e.Int(int64(3 * time.Millisecond))
	f.Add(e.B)
	var far wire.Enc
	far.U8(wire.TimerSync)
	far.Int(-1)
	far.U8(wire.TimerInsert)
	far.Uint(1)
	far.Int(1<<63 - 1)
	far.U8(wire.TimerFire)
	far.Uint(1)
	far.Int(1<<63 - 1)
	f.Add(far.B)
	f.Fuzz(func(t *testing.T, frame []byte) {
		ts := &TimerService{New: func(c core.Clock) (core.Timer, error) { return wheel.New(c, 1), nil }}
		clock := core.NewVirtualClock()
		clock.SetAutoAdvance(false)
		s := &timerSession{clock: clock, entries: map[uint64]*core.TimerEntry{}}
		var out wire.Enc
		if err := ts.apply(s, frame, &out); err != nil {
			requireMalformed(t, err)
		}
		// The replies are well formed.
		d := wire.NewDec(out.B)
		for d.More() {
			switch code := d.U8(); code {
			case wire.TimerHello:
				d.Uint()
			case wire.TimerFired:
				d.Uint()
				for range d.Count("ids", len(out.B)) {
					d.Uint()
				}
				d.Bool()
				d.Int()
			default:
				t.Fatalf("reply code %d", code)
			}
		}
		if d.Err() != nil {
			t.Fatalf("a malformed reply: %v", d.Err())
		}
	})
}

// fakeDriver is a driver whose operations on its open handles succeed at
// once, except Accept and Connect, which stay pending until dropped:
// enough for every operation of the protocol to reach the driver.
type fakeDriver struct {
	next core.Handle
	open map[core.Handle]bool
}

func (d *fakeDriver) handle() core.Handle {
	d.next++
	d.open[d.next] = true
	return d.next
}

func (d *fakeDriver) check(h core.Handle) error {
	if !d.open[h] {
		return errors.New("fake: not an open handle")
	}
	return nil
}

func ready[T any](v T, err error) core.Future[core.Result[T]] {
	return core.PollFunc[core.Result[T]](func(*core.Context) (core.Result[T], bool) {
		return core.Result[T]{Value: v, Err: err}, true
	})
}

func pending[T any]() core.Future[core.Result[T]] {
	return core.PollFunc[core.Result[T]](func(*core.Context) (core.Result[T], bool) {
		return core.Result[T]{}, false
	})
}

func (d *fakeDriver) Park(time.Duration) error { return nil }
func (d *fakeDriver) Unpark()                  {}
func (d *fakeDriver) Close() error             { return nil }
func (d *fakeDriver) Listen(string, string, core.SocketOptions) (core.Handle, core.Addr, error) {
	return d.handle(), core.Addr{Net: "fake"}, nil
}
func (d *fakeDriver) Accept(core.Handle) core.Future[core.Result[core.Accepted]] {
	return pending[core.Accepted]()
}
func (d *fakeDriver) Connect(string, string, core.SocketOptions) core.Future[core.Result[core.Handle]] {
	return pending[core.Handle]()
}

// Read and RecvFrom return a few bytes: a frame of reads makes a
// completion frame no larger than itself many times over.
func (d *fakeDriver) Read(h core.Handle, p []byte) core.Future[core.Result[int]] {
	return ready(min(len(p), 8), d.check(h))
}
func (d *fakeDriver) Write(h core.Handle, p []byte) core.Future[core.Result[int]] {
	return ready(len(p), d.check(h))
}
func (d *fakeDriver) Shutdown(h core.Handle, _ core.ShutdownHow) error          { return d.check(h) }
func (d *fakeDriver) SetOption(h core.Handle, _ core.SocketOption, _ int) error { return d.check(h) }
func (d *fakeDriver) LocalAddr(h core.Handle) (core.Addr, error) {
	return core.Addr{Net: "fake"}, d.check(h)
}
func (d *fakeDriver) PeerAddr(h core.Handle) (core.Addr, error) {
	return core.Addr{Net: "fake"}, d.check(h)
}
func (d *fakeDriver) CloseHandle(h core.Handle) error {
	err := d.check(h)
	delete(d.open, h)
	return err
}
func (d *fakeDriver) Bind(string, string, core.SocketOptions) (core.Handle, core.Addr, error) {
	return d.handle(), core.Addr{Net: "fake"}, nil
}
func (d *fakeDriver) ConnectDatagram(h core.Handle, _ string) error { return d.check(h) }
func (d *fakeDriver) RecvFrom(h core.Handle, p []byte) core.Future[core.Result[core.Datagram]] {
	return ready(core.Datagram{N: min(len(p), 8), From: core.Addr{Net: "fake"}}, d.check(h))
}
func (d *fakeDriver) SendTo(h core.Handle, p []byte, _ string) core.Future[core.Result[int]] {
	return ready(len(p), d.check(h))
}
func (d *fakeDriver) JoinGroup(h core.Handle, _, _ string) error { return d.check(h) }

func newFakeSession() *driverSession {
	drv := &fakeDriver{open: map[core.Handle]bool{}}
	s := &driverSession{
		drv:     drv,
		dgram:   drv,
		log:     slog.New(slog.DiscardHandler),
		ops:     map[uint64]*pop{},
		handles: map[uint64]*hstate{},
	}
	return s
}

// putListen appends a request to listen on a TCP port of the loopback.
func putListen(e *wire.Enc, id uint64) {
	e.U8(wire.OpListen)
	e.Uint(id)
	e.String("tcp")
	e.String("127.0.0.1:0")
	e.PutOpts(core.SocketOptions{Backlog: 16})
}

func FuzzDriverRequestFrame(f *testing.F) {
	var e wire.Enc
	putListen(&e, 1)
	e.U8(wire.OpAccept)
	e.Uint(2)
	e.Uint(1)
	e.U8(wire.OpRead)
	e.Uint(3)
	e.Uint(1)
	e.Uint(64)
	e.U8(wire.OpWrite)
	e.Uint(4)
	e.Uint(1)
	e.Bytes([]byte("hello"))
	e.U8(wire.OpSetOption)
	e.Uint(5)
	e.Uint(1)
	e.U8(1)
	e.Int(1)
	e.U8(wire.OpCancel)
	e.Uint(2)
	e.U8(wire.OpCloseHandle)
	e.Uint(0)
	e.Uint(1)
	f.Add(e.B)
	var big wire.Enc // a read of 2^62 bytes
	big.U8(wire.OpBind)
	big.Uint(1)
	big.String("udp")
	big.String(":0")
	big.PutOpts(core.SocketOptions{})
	big.U8(wire.OpRecvFrom)
	big.Uint(2)
	big.Uint(1)
	big.Uint(1 << 62)
	f.Add(big.B)
	f.Add([]byte{0xee, 1})
	f.Fuzz(func(t *testing.T, frame []byte) {
		s := newFakeSession()
		s.handleFrame(frame)
		// A malformed frame, and only a malformed one, is refused by a
		// last record with id 0 that says what was wrong.
		refused := bytes.Contains(s.out.B, []byte(wire.ErrMalformed.Error()))
		if malformed := malformedRequest(frame); refused != malformed {
			t.Fatalf("malformed %v, refused %v", malformed, refused)
		}
		if refused {
			i := bytes.LastIndex(s.out.B, []byte{0, wire.StatusErr})
			d := wire.NewDec(s.out.B[i:])
			id, status, err := d.Uint(), d.U8(), d.Error()
			if id != 0 || status != wire.StatusErr || !strings.Contains(err.Error(), wire.ErrMalformed.Error()) || d.More() || d.Err() != nil {
				t.Fatalf("the refusal is not the last record: % x", s.out.B[i:])
			}
		}
		for id, p := range s.ops {
			if p.id != id || p.done {
				t.Fatalf("operation %d in the table is %+v", id, p)
			}
		}
		for wh, hs := range s.handles {
			if hs.wh != wh {
				t.Fatalf("handle %d in the table is %d", wh, hs.wh)
			}
		}
	})
}

// malformedRequest reports whether a request frame breaks the protocol:
// the test's own reading of the records listed in package wire.
func malformedRequest(frame []byte) bool {
	d := wire.NewDec(frame)
	for d.More() {
		op := d.U8()
		d.Uint() // id
		switch op {
		case wire.OpListen, wire.OpConnect, wire.OpBind:
			d.Bytes()
			d.Bytes()
			d.Bool()
			d.Bool()
			d.Int()
		case wire.OpAccept, wire.OpLocalAddr, wire.OpPeerAddr, wire.OpCloseHandle:
			d.Uint()
		case wire.OpRead, wire.OpRecvFrom:
			d.Uint()
			d.Uint()
		case wire.OpWrite:
			d.Uint()
			d.Bytes()
		case wire.OpShutdown:
			d.Uint()
			d.U8()
		case wire.OpSetOption:
			d.Uint()
			d.U8()
			d.Int()
		case wire.OpConnectDatagram:
			d.Uint()
			d.Bytes()
		case wire.OpSendTo:
			d.Uint()
			d.Bytes()
			d.Bytes()
		case wire.OpJoinGroup:
			d.Uint()
			d.Bytes()
			d.Bytes()
		case wire.OpCancel:
		default:
			return true
		}
	}
	return d.Err() != nil
}
