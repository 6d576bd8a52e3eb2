package plugins

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/weftrt/weft/plugins/internal/wire"
)

// stream is one session stream of a timer or scheduler plugin: records are
// appended to an outgoing frame (Append, under the stream's lock), a sender
// goroutine ships whatever accumulated when flushed, and a receiver
// goroutine hands every incoming frame to onFrame, then reports the end to
// onEnd and closes done.
type stream struct {
	cs     grpc.ClientStream
	cancel context.CancelFunc

	mu      sync.Mutex
	out     wire.Enc
	closing bool
	kick    chan struct{} // capacity 1
	done    chan struct{}
	err     error // why the stream ended; set before done is closed
}

// openStream opens the Session stream of service on p.
func openStream(p *process, service string, onFrame func(s *stream, frame []byte) error, onEnd func(s *stream, err error)) (*stream, error) {
	ctx, cancel := context.WithCancel(context.Background())
	cs, err := wire.OpenSession(ctx, p.conn, service)
	if err != nil {
		cancel()
		return nil, err
	}
	s := &stream{cs: cs, cancel: cancel, kick: make(chan struct{}, 1), done: make(chan struct{})}
	go s.sender()
	go func() {
		var err error
		for {
			m := new(wrapperspb.BytesValue)
			if err = cs.RecvMsg(m); err != nil {
				break
			}
			if err = onFrame(s, m.Value); err != nil {
				break
			}
		}
		s.err = err
		onEnd(s, err)
		cancel()
		close(s.done)
	}()
	return s, nil
}

// append adds records to the outgoing frame, to be sent at the next
// flush, and returns the size of the unsent frame.
func (s *stream) append(f func(e *wire.Enc)) int {
	s.mu.Lock()
	f(&s.out)
	n := len(s.out.B)
	s.mu.Unlock()
	return n
}

// flush wakes the sender.
func (s *stream) flush() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// closeSend asks the sender to half-close the stream after what is queued;
// the plugin then ends its session and the receiver sees the end.
func (s *stream) closeSend() {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.flush()
}

// abort ends the stream at once.
func (s *stream) abort() { s.cancel() }

func (s *stream) sender() {
	for {
		select {
		case <-s.kick:
		case <-s.done:
			return
		}
		s.mu.Lock()
		buf := s.out.B
		s.out.B = nil
		closing := s.closing
		s.mu.Unlock()
		if len(buf) > 0 {
			// A fresh buffer per message: gRPC may hold on to it.
			if err := s.cs.SendMsg(wrapperspb.Bytes(buf)); err != nil {
				return // the receiver sees the stream end
			}
		}
		if closing {
			_ = s.cs.CloseSend()
			return
		}
	}
}
