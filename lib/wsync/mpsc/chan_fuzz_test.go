package mpsc_test

import (
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

// chanModel is the reference the bounded-channel fuzz test checks against:
// a FIFO of messages, the free capacity, the sends waiting in order (each
// granted or not), and the permits held.
type chanModel struct {
	capacity int
	queue    []int
	free     int
	pending  []*modelSend
	permits  []*mpsc.Permit[int]
	held     int // capacity held by permits
	rxClosed bool
	txClosed bool
}

type modelSend struct {
	f       *mpsc.SendFuture[int]
	h       *hand
	v       int
	granted bool
}

// grant hands free capacity to the waiting sends in order, as the channel
// must, and reports which ones became granted.
func (m *chanModel) grant() []*modelSend {
	var granted []*modelSend
	if m.rxClosed {
		return nil
	}
	for _, s := range m.pending {
		if s.granted {
			continue
		}
		if m.free == 0 {
			break
		}
		m.free--
		s.granted = true
		granted = append(granted, s)
	}
	return granted
}

func (m *chanModel) ungranted() bool {
	for _, s := range m.pending {
		if !s.granted {
			return true
		}
	}
	return false
}

func (m *chanModel) closed() bool { return m.rxClosed || m.txClosed }

// idle: no message can come any more.
func (m *chanModel) idle() bool {
	granted := 0
	for _, s := range m.pending {
		if s.granted {
			granted++
		}
	}
	return m.closed() && m.held == 0 && granted == 0 && len(m.queue) == 0 && m.free == m.capacity
}

// FuzzBoundedChannelMatchesAModel drives a bounded channel through try-
// sends, send futures polled and dropped in any order, receives, permits
// and closes, and checks every outcome, every wake of a waiting send and
// the capacity accounting against chanModel.
func FuzzBoundedChannelMatchesAModel(f *testing.F) {
	f.Add(uint8(2), []byte{0, 0, 1, 1, 2, 3, 0, 2, 4, 0, 5, 6, 7, 8, 2, 2, 9})
	f.Add(uint8(1), []byte{1, 1, 1, 2, 4, 1, 3, 0, 2, 2, 2, 8, 3, 3, 9, 9})
	f.Add(uint8(3), []byte{5, 5, 1, 1, 7, 6, 2, 2, 10, 2, 2, 2})
	f.Fuzz(func(t *testing.T, capacity uint8, ops []byte) {
		cp := int(capacity%4) + 1
		tx, rx := mpsc.New[int](cp)
		m := &chanModel{capacity: cp, free: cp}
		next := 1
		rh := newHand()
		checkGrants := func(granted []*modelSend) {
			t.Helper()
			for _, s := range m.pending {
				want := false
				for _, g := range granted {
					want = want || g == s
				}
				if got := s.h.Woken(); got != want {
					t.Fatalf("send of %d woken=%v, want %v", s.v, got, want)
				}
			}
		}
		pick := func(i *int, n int) int {
			if *i+1 < len(ops) {
				*i++
				return int(ops[*i]) % n
			}
			return 0
		}
		for i := 0; i < len(ops); i++ {
			switch ops[i] % 11 {
			case 0: // TrySend
				v := next
				next++
				err := tx.TrySend(v)
				switch {
				case m.txClosed || m.rxClosed:
					if err != mpsc.ErrClosed {
						t.Fatalf("TrySend on a closed channel: %v", err)
					}
				case m.free > 0 && !m.ungranted():
					if err != nil {
						t.Fatalf("TrySend with room: %v", err)
					}
					m.free--
					m.queue = append(m.queue, v)
				default:
					if err != mpsc.ErrFull {
						t.Fatalf("TrySend without room: %v", err)
					}
				}
			case 1: // start a send and poll it once
				if m.txClosed {
					continue
				}
				v := next
				next++
				s := &modelSend{f: tx.Send(v), h: newHand(), v: v}
				err, ok := s.f.Poll(s.h.Cx)
				switch {
				case m.rxClosed:
					if !ok || err != mpsc.ErrClosed {
						t.Fatalf("send on a closed channel: %v %v", err, ok)
					}
				case m.free > 0 && !m.ungranted():
					if !ok || err != nil {
						t.Fatalf("send with room: %v %v", err, ok)
					}
					m.free--
					m.queue = append(m.queue, v)
				default:
					if ok {
						t.Fatalf("send without room completed: %v", err)
					}
					m.pending = append(m.pending, s)
				}
			case 2, 9: // receive (try or future)
				var v int
				var err error
				if ops[i]%11 == 2 {
					v, err = rx.TryRecv()
				} else {
					r, ok := rx.Recv().Poll(rh.Cx)
					if !ok {
						err = mpsc.ErrEmpty
						rx.Recv().Drop()
					} else {
						v, err = r.Value, r.Err
					}
				}
				switch {
				case len(m.queue) > 0:
					if err != nil || v != m.queue[0] {
						t.Fatalf("receive = %d, %v, want %d", v, err, m.queue[0])
					}
					m.queue = m.queue[1:]
					m.free++
					checkGrants(m.grant())
				case m.idle():
					if err != mpsc.ErrClosed {
						t.Fatalf("receive on an ended channel: %d, %v", v, err)
					}
				default:
					if err != mpsc.ErrEmpty {
						t.Fatalf("receive on an empty channel: %d, %v", v, err)
					}
				}
			case 3: // poll a waiting send
				if len(m.pending) == 0 {
					continue
				}
				k := pick(&i, len(m.pending))
				s := m.pending[k]
				err, ok := s.f.Poll(s.h.Cx)
				switch {
				case s.granted:
					if !ok || err != nil {
						t.Fatalf("granted send: %v %v", err, ok)
					}
					m.queue = append(m.queue, s.v)
				case m.rxClosed:
					if !ok || err != mpsc.ErrClosed {
						t.Fatalf("closed send: %v %v", err, ok)
					}
				default:
					if ok {
						t.Fatalf("ungranted send completed")
					}
					continue
				}
				m.pending = append(m.pending[:k], m.pending[k+1:]...)
			case 4: // drop a waiting send
				if len(m.pending) == 0 {
					continue
				}
				k := pick(&i, len(m.pending))
				s := m.pending[k]
				m.pending = append(m.pending[:k], m.pending[k+1:]...)
				s.f.Drop()
				if s.granted {
					m.free++
					checkGrants(m.grant())
				}
			case 5: // TryReserve
				p, err := tx.TryReserve()
				switch {
				case m.txClosed || m.rxClosed:
					if err != mpsc.ErrClosed {
						t.Fatalf("TryReserve on a closed channel: %v", err)
					}
				case m.free > 0 && !m.ungranted():
					if err != nil {
						t.Fatalf("TryReserve with room: %v", err)
					}
					m.free--
					m.held++
					m.permits = append(m.permits, &p)
				default:
					if err != mpsc.ErrFull {
						t.Fatalf("TryReserve without room: %v", err)
					}
				}
			case 6: // send through a permit
				if len(m.permits) == 0 {
					continue
				}
				k := pick(&i, len(m.permits))
				v := next
				next++
				m.permits[k].Send(v)
				m.permits = append(m.permits[:k], m.permits[k+1:]...)
				m.held--
				m.queue = append(m.queue, v)
			case 7: // release a permit
				if len(m.permits) == 0 {
					continue
				}
				k := pick(&i, len(m.permits))
				m.permits[k].Release()
				m.permits = append(m.permits[:k], m.permits[k+1:]...)
				m.held--
				m.free++
				checkGrants(m.grant())
			case 8: // the receiver closes
				if m.rxClosed {
					continue
				}
				rx.Close()
				m.rxClosed = true
				for _, s := range m.pending {
					if s.h.Woken() != !s.granted {
						t.Fatalf("close: send of %d (granted %v) woken wrongly", s.v, s.granted)
					}
				}
			case 10: // the sender handle closes (sends already started go on)
				tx.Close()
				m.txClosed = true
			}
			if got := rx.Len(); got != len(m.queue) {
				t.Fatalf("Len = %d, want %d", got, len(m.queue))
			}
			if got := tx.Capacity(); got != m.free {
				t.Fatalf("Capacity = %d, want %d", got, m.free)
			}
		}
		// Wind down: release permits, drop sends, and drain.
		for _, p := range m.permits {
			p.Release()
		}
		for _, s := range m.pending {
			s.f.Drop()
		}
		tx.Close()
		for _, want := range m.queue {
			v, err := rx.TryRecv()
			if err != nil || v != want {
				t.Fatalf("drain: %d, %v, want %d", v, err, want)
			}
		}
		if _, err := rx.TryRecv(); err != mpsc.ErrClosed {
			t.Fatalf("drained channel: %v, want ErrClosed", err)
		}
		if r, ok := rx.Recv().Poll(core.NewContext(nil)); !ok || r.Err != mpsc.ErrClosed {
			t.Fatalf("drained channel Recv: %v %v", r.Err, ok)
		}
		if tx.Capacity() != cp {
			t.Fatalf("capacity %d after wind-down, want %d", tx.Capacity(), cp)
		}
	})
}
