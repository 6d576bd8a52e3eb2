package server

import (
	"fmt"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
	"github.com/weftrt/weft/plugins/policy"
)

// PolicyService serves scheduler policy sessions: each Session stream gets
// a fresh policy from New and answers every batch of events with its run
// order.
type PolicyService struct {
	New func() policy.Policy
	Log *slog.Logger
}

// Register registers the service on s.
func (ps *PolicyService) Register(s *grpc.Server) {
	s.RegisterService(wire.SessionDesc(wire.SchedulerServiceName), ps)
}

// Session implements wire.SessionServer.
func (ps *PolicyService) Session(stream grpc.ServerStream) error {
	p := ps.New()
	if p == nil {
		return fmt.Errorf("the policy factory returned nil")
	}
	var events []policy.Event
	var out wire.Enc
	for {
		m := new(wrapperspb.BytesValue)
		if err := stream.RecvMsg(m); err != nil {
			return nil
		}
		out.B = nil
		if err := answerFrame(p, m.Value, &events, &out); err != nil {
			if ps.Log != nil {
				ps.Log.Error("scheduler policy session ends", "error", err)
			}
			return wire.Reject(err)
		}
		if err := stream.SendMsg(wrapperspb.Bytes(out.B)); err != nil {
			return nil
		}
	}
}

// answerFrame answers every request of one frame (see package wire),
// appending the answers to out. A malformed frame is an error saying what
// was wrong; the policy has then seen the requests before the fault.
func answerFrame(p policy.Policy, frame []byte, events *[]policy.Event, out *wire.Enc) error {
	d := wire.NewDec(frame)
	for d.More() {
		req := d.Bytes()
		if d.Err() != nil {
			break
		}
		if err := answer(p, req, events, out); err != nil {
			return err
		}
	}
	if d.Err() != nil {
		return fmt.Errorf("protocol error: %w", d.Err())
	}
	return nil
}

// answer decodes one request, asks the policy and appends the answer.
// The request is decoded whole before the policy sees any of it.
func answer(p policy.Policy, req []byte, events *[]policy.Event, out *wire.Enc) error {
	d := wire.NewDec(req)
	seq := d.Uint()
	maxN := int(d.UintMax("a request for decisions", wire.MaxDecision))
	*events = (*events)[:0]
	for d.More() {
		e := policy.Event{Kind: policy.Kind(d.U8()), Task: core.TaskID(d.Uint())}
		switch e.Kind {
		case policy.Spawned:
			e.Priority = int(d.Int())
			e.Name = d.String()
		case policy.Woken:
			e.Priority = int(d.Int())
		case policy.Polled, policy.Completed:
		default:
			d.Failf("unknown task event %d", uint8(e.Kind))
		}
		*events = append(*events, e)
	}
	if d.Err() != nil {
		return fmt.Errorf("protocol error in request %d: %w", seq, d.Err())
	}
	ids := p.OnEvents(policy.Batch{Events: *events, Max: maxN})
	if len(ids) > maxN {
		ids = ids[:maxN]
	}
	out.Uint(seq)
	out.Uint(uint64(len(ids)))
	for _, id := range ids {
		out.Uint(uint64(id))
	}
	return nil
}
