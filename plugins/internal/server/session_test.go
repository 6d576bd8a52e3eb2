package server

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
	"github.com/weftrt/weft/plugins/policy"
	"github.com/weftrt/weft/timers/wheel"
)

// fakeHost is the host's end of a session stream: it hands the session
// the frames it was given, then ends the stream, and keeps what the
// session sends.
type fakeHost struct {
	mu   sync.Mutex
	in   [][]byte
	sent [][]byte
}

func (h *fakeHost) RecvMsg(m any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.in) == 0 {
		return io.EOF
	}
	m.(*wrapperspb.BytesValue).Value = h.in[0]
	h.in = h.in[1:]
	return nil
}

func (h *fakeHost) SendMsg(m any) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.sent = append(h.sent, m.(*wrapperspb.BytesValue).Value)
	return nil
}

func (h *fakeHost) SetHeader(metadata.MD) error  { return nil }
func (h *fakeHost) SendHeader(metadata.MD) error { return nil }
func (h *fakeHost) SetTrailer(metadata.MD)       {}
func (h *fakeHost) Context() context.Context     { return context.Background() }

func TestAPolicySessionEndsOnAMalformedRequestSayingWhy(t *testing.T) {
	var e wire.Enc
	policyRequest(&e, 1, 1<<63, nil)
	host := &fakeHost{in: [][]byte{e.B}}
	err := (&PolicyService{New: func() policy.Policy { return policy.NewPriority() }}).Session(host)
	require.True(t, wire.Rejected(err), "the session ends with the rejection status: %v", err)
	assert.ErrorContains(t, err, "a request for decisions of 9223372036854775808, above the limit 65536")
	assert.Empty(t, host.sent)
}

func TestATimerSessionEndsOnAMalformedRecordSayingWhy(t *testing.T) {
	var e wire.Enc
	e.U8(wire.TimerSync)
	e.Int(0)
	e.U8(9)
	host := &fakeHost{in: [][]byte{e.B}}
	ts := &TimerService{New: func(c core.Clock) (core.Timer, error) { return wheel.New(c, 1), nil }}
	err := ts.Session(host)
	require.True(t, wire.Rejected(err), "the session ends with the rejection status: %v", err)
	assert.ErrorContains(t, err, "unknown timer record 9")
}

// A request frame the plugin cannot parse is refused with the record the
// host ends the session on: the error says what was wrong, and the
// records before the fault were executed.
func TestADriverSessionRefusesAMalformedFrameSayingWhy(t *testing.T) {
	var e wire.Enc
	putListen(&e, 1)
	e.U8(0xee)
	e.Uint(2)
	s := newFakeSession()
	s.handleFrame(e.B)
	d := wire.NewDec(s.out.B)
	require.Equal(t, uint64(1), d.Uint(), "the listen completes")
	require.Equal(t, wire.StatusOK, d.U8())
	d.Uint()
	d.Addr()
	require.Equal(t, uint64(0), d.Uint(), "then the refusal")
	require.Equal(t, wire.StatusErr, d.U8())
	err := d.Error()
	require.NoError(t, d.Err())
	assert.False(t, d.More())
	assert.True(t, strings.HasPrefix(err.Error(), "weft plugin wire: malformed frame: unknown operation 238"), err.Error())
}
