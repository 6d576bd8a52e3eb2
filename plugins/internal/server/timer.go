package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
)

// TimerService serves timer sessions: each Session stream builds a timer
// from New on a mirror of the host's clock and applies the host's records
// to it (see package wire for the records).
type TimerService struct {
	New func(clock core.Clock) (core.Timer, error)
	Log *slog.Logger
}

// Register registers the service on s.
func (ts *TimerService) Register(s *grpc.Server) {
	s.RegisterService(wire.SessionDesc(wire.TimerServiceName), ts)
}

// timerSession is one host timer's plugin side. Only the session's
// goroutine touches it, except fired, which wakers append to (a timer may
// wake on another goroutine, so it has a lock of its own).
type timerSession struct {
	clock   *core.VClock
	tm      core.Timer
	entries map[uint64]*core.TimerEntry

	mu    sync.Mutex
	fired []uint64
}

// firedWaker records that entry id fired.
type firedWaker struct {
	s  *timerSession
	id uint64
}

func (w firedWaker) Wake() {
	w.s.mu.Lock()
	w.s.fired = append(w.s.fired, w.id)
	w.s.mu.Unlock()
}

// Session implements wire.SessionServer: one frame in, at most one frame
// out, until the host ends the stream.
func (ts *TimerService) Session(stream grpc.ServerStream) error {
	clock := core.NewVirtualClock()
	clock.SetAutoAdvance(false)
	s := &timerSession{clock: clock, entries: map[uint64]*core.TimerEntry{}}
	defer func() {
		if c, ok := s.tm.(io.Closer); ok {
			_ = c.Close()
		}
	}()
	var out wire.Enc
	for {
		m := new(wrapperspb.BytesValue)
		if err := stream.RecvMsg(m); err != nil {
			return nil // the host ended the session (or went away)
		}
		out.B = nil
		if err := ts.apply(s, m.Value, &out); err != nil {
			if ts.Log != nil {
				ts.Log.Error("timer session ends", "error", err)
			}
			if errors.Is(err, wire.ErrMalformed) {
				return wire.Reject(err)
			}
			return err
		}
		if len(out.B) > 0 {
			if err := stream.SendMsg(wrapperspb.Bytes(out.B)); err != nil {
				return nil
			}
		}
	}
}

// apply applies one frame of records, appending the replies to out. A
// malformed record is an error saying what was wrong (matching
// wire.ErrMalformed); the records before it were applied.
func (ts *TimerService) apply(s *timerSession, frame []byte, out *wire.Enc) error {
	d := wire.NewDec(frame)
	for d.More() {
		op := d.U8()
		if s.tm == nil && op != wire.TimerSync {
			d.Failf("timer record %d before the session's first sync", op)
			break
		}
		switch op {
		case wire.TimerSync:
			now := core.Instant(d.Int())
			if d.Err() != nil {
				break
			}
			s.clock.AdvanceTo(now)
			if s.tm == nil {
				tm, err := ts.New(s.clock)
				if err != nil {
					return fmt.Errorf("creating the timer: %w", err)
				}
				if tm == nil {
					return errors.New("creating the timer: the factory returned nil")
				}
				s.tm = tm
				var res time.Duration
				if r, ok := tm.(interface{ Resolution() time.Duration }); ok {
					res = max(r.Resolution(), 0)
				}
				out.U8(wire.TimerHello)
				out.Uint(uint64(res))
			}
		case wire.TimerInsert:
			id, deadline := d.Uint(), core.Instant(d.Int())
			if d.Err() != nil {
				break
			}
			e := s.entries[id]
			if e == nil {
				e = &core.TimerEntry{}
				e.Waker.Register(firedWaker{s, id})
				s.entries[id] = e
			}
			e.Deadline = deadline
			s.tm.Insert(e)
		case wire.TimerCancel:
			id := d.Uint()
			if d.Err() != nil {
				break
			}
			if e := s.entries[id]; e != nil {
				s.tm.Cancel(e)
				delete(s.entries, id)
			}
		case wire.TimerFire:
			seq, now := d.Uint(), core.Instant(d.Int())
			if d.Err() != nil {
				break
			}
			// Concurrent host Fires may arrive with their instants out
			// of order; the mirror never goes back, and each Fire fires
			// at the latest instant the host has shown it.
			s.clock.AdvanceTo(now)
			s.tm.Fire(s.clock.Now())
			s.mu.Lock()
			fired := s.fired
			s.fired = nil
			s.mu.Unlock()
			out.U8(wire.TimerFired)
			out.Uint(seq)
			out.Uint(uint64(len(fired)))
			for _, id := range fired {
				out.Uint(id)
				delete(s.entries, id)
			}
			next, ok := s.tm.NextDeadline()
			out.Bool(ok)
			out.Int(int64(next))
		default:
			d.Failf("unknown timer record %d", op)
		}
	}
	if d.Err() != nil {
		return fmt.Errorf("protocol error: %w", d.Err())
	}
	return nil
}
