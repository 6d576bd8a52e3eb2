package broadcast_test

import (
	"errors"
	"testing"

	"github.com/weftrt/weft/lib/wsync/broadcast"
)

// FuzzBroadcastMatchesAModel drives a broadcast channel with sends,
// receives on any receiver, subscriptions and closes, and checks every
// value, every lag count and every length against a model that keeps all
// messages ever sent and each receiver's position.
func FuzzBroadcastMatchesAModel(f *testing.F) {
	f.Add(uint8(2), []byte{0, 0, 0, 1, 0, 1, 1, 2, 0, 0, 1, 1, 1, 3, 1, 4})
	f.Add(uint8(0), []byte{0, 0, 0, 0, 0, 1, 0, 1, 0, 2, 1, 1})
	f.Fuzz(func(t *testing.T, capByte uint8, ops []byte) {
		capacity := 1 << (capByte % 4) // 1, 2, 4 or 8
		tx, first := broadcast.New[int](capacity)
		type modelRx struct {
			rx     *broadcast.Receiver[int]
			next   int
			closed bool
		}
		var sent []int
		rxs := []*modelRx{{rx: first}}
		txClosed := false
		live := func() int {
			n := 0
			for _, r := range rxs {
				if !r.closed {
					n++
				}
			}
			return n
		}
		for i := 0; i < len(ops); i++ {
			arg := 0
			if i+1 < len(ops) {
				arg = int(ops[i+1])
			}
			switch ops[i] % 5 {
			case 0: // send
				v := len(sent) + 1
				n, err := tx.Send(v)
				switch {
				case txClosed:
					if !errors.Is(err, broadcast.ErrClosed) {
						t.Fatalf("send on a closed handle: %v", err)
					}
				case live() == 0:
					if !errors.Is(err, broadcast.ErrNoReceivers) {
						t.Fatalf("send without receivers: %v", err)
					}
				default:
					if err != nil || n != live() {
						t.Fatalf("send = %d, %v, want %d", n, err, live())
					}
					sent = append(sent, v)
				}
			case 1: // receive on receiver arg
				i++
				r := rxs[arg%len(rxs)]
				v, err := r.rx.TryRecv()
				switch {
				case r.closed || (r.next == len(sent) && txClosed):
					if !errors.Is(err, broadcast.ErrClosed) {
						t.Fatalf("receive at the end: %d, %v", v, err)
					}
				case r.next == len(sent):
					if !errors.Is(err, broadcast.ErrEmpty) {
						t.Fatalf("receive with nothing new: %d, %v", v, err)
					}
				case len(sent)-r.next > capacity:
					var lag broadcast.LaggedError
					if !errors.As(err, &lag) || int(lag.Missed) != len(sent)-capacity-r.next {
						t.Fatalf("lagged receive: %v, want %d missed", err, len(sent)-capacity-r.next)
					}
					r.next = len(sent) - capacity
				default:
					if err != nil || v != sent[r.next] {
						t.Fatalf("receive = %d, %v, want %d", v, err, sent[r.next])
					}
					r.next++
				}
			case 2: // subscribe
				rxs = append(rxs, &modelRx{rx: tx.Subscribe(), next: len(sent)})
			case 3: // close receiver arg
				i++
				r := rxs[arg%len(rxs)]
				r.rx.Close()
				r.closed = true
			case 4: // close the sender
				tx.Close()
				txClosed = true
			}
			for k, r := range rxs {
				want := min(len(sent)-r.next, capacity)
				if got := r.rx.Len(); !r.closed && got != want {
					t.Fatalf("receiver %d: Len = %d, want %d", k, got, want)
				}
			}
		}
	})
}
