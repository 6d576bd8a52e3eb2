package wire

import (
	"errors"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

func TestEveryValueSurvivesTheRoundTrip(t *testing.T) {
	var e Enc
	e.U8(7)
	e.Uint(math.MaxUint64)
	e.Int(math.MinInt64)
	e.Bytes([]byte("data"))
	e.String("text")
	e.Bool(true)
	e.PutOpts(core.SocketOptions{ReuseAddr: true, Backlog: 128})
	e.PutAddr(core.Addr{Net: "tcp", Addr: "127.0.0.1:80"})
	e.PutError(os.NewSyscallError("connect", syscall.ECONNREFUSED))
	e.PutError(io.EOF)
	d := NewDec(e.B)
	assert.Equal(t, byte(7), d.U8())
	assert.Equal(t, uint64(math.MaxUint64), d.Uint())
	assert.Equal(t, int64(math.MinInt64), d.Int())
	assert.Equal(t, []byte("data"), d.Bytes())
	assert.Equal(t, "text", d.String())
	assert.True(t, d.Bool())
	assert.Equal(t, core.SocketOptions{ReuseAddr: true, Backlog: 128}, d.Opts())
	assert.Equal(t, core.Addr{Net: "tcp", Addr: "127.0.0.1:80"}, d.Addr())
	assert.ErrorIs(t, d.Error(), syscall.ECONNREFUSED)
	assert.Equal(t, io.EOF, d.Error())
	require.NoError(t, d.Err())
	assert.False(t, d.More())
}

// A length or a count is checked against the bytes the frame still holds
// before anything is made of it.
func TestAHugeLengthPrefixFailsWithoutAllocating(t *testing.T) {
	var e Enc
	e.Uint(1 << 62)
	e.B = append(e.B, "abc"...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		d := NewDec(e.B)
		if d.Bytes() != nil || d.Err() == nil {
			t.Fatal("a 2^62-byte string decoded")
		}
	}
	runtime.ReadMemStats(&after)
	assert.Less(t, (after.TotalAlloc-before.TotalAlloc)/100, uint64(1024), "bytes allocated per decode: only the error's")
	d := NewDec(e.B)
	d.Bytes()
	require.ErrorIs(t, d.Err(), ErrShortFrame)
	assert.ErrorContains(t, d.Err(), "a 4611686018427387904-byte string with 3 bytes left")

	d = NewDec(e.B)
	assert.Equal(t, 0, d.Count("task ids", math.MaxInt))
	require.ErrorIs(t, d.Err(), ErrMalformed)
	assert.ErrorContains(t, d.Err(), "4611686018427387904 task ids in the 3 bytes left")
}

func TestMalformedValuesAreErrorsNamingThem(t *testing.T) {
	for _, c := range []struct {
		name  string
		frame []byte
		read  func(d *Dec)
		want  string
	}{
		{"truncated varint", []byte{0x80}, func(d *Dec) { d.Uint() }, "truncated: a varint at byte 0 of a 1-byte frame"},
		{"overlong varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}, func(d *Dec) { d.Uint() }, "a varint longer than 64 bits"},
		{"empty", nil, func(d *Dec) { d.U8() }, "truncated: a byte at byte 0 of a 0-byte frame"},
		{"boolean", []byte{2}, func(d *Dec) { d.Bool() }, "a boolean byte 2, not 0 or 1"},
		{"limit", []byte{0x81, 0x02}, func(d *Dec) { d.UintMax("a request for decisions", 256) }, "a request for decisions of 257, above the limit 256"},
		{"count limit", []byte{5, 1, 2, 3, 4, 5}, func(d *Dec) { d.Count("task ids", 4) }, "5 task ids, above the limit 4"},
		{"error code", []byte{99}, func(d *Dec) { _ = d.Error() }, "unknown error code 99"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDec(c.frame)
			c.read(d)
			require.ErrorIs(t, d.Err(), ErrMalformed)
			assert.ErrorContains(t, d.Err(), c.want)
			assert.False(t, d.More())
			assert.Zero(t, d.Uint(), "reads after an error return zero values")
		})
	}
}

func TestARemoteErrorMatchesTheSentinelsTheOriginalMatched(t *testing.T) {
	var e Enc
	e.PutError(errors.Join(errors.New("dial failed"), net.ErrClosed, syscall.EPIPE))
	err := NewDec(e.B).Error()
	assert.ErrorIs(t, err, net.ErrClosed)
	assert.ErrorIs(t, err, syscall.EPIPE)
	assert.False(t, errors.Is(err, io.EOF))
	assert.True(t, strings.HasPrefix(err.Error(), "dial failed"))
}

func TestAnInfoIsCheckedFieldByField(t *testing.T) {
	info, err := DecodeInfo([]byte(`{"kind":"driver","name":"epoll","protocol":1,"capabilities":["vectored"],"pid":42}`))
	require.NoError(t, err)
	assert.Equal(t, Info{Kind: KindDriver, Name: "epoll", Protocol: 1, Capabilities: []string{"vectored"}, PID: 42}, info)
	for _, c := range []struct{ json, want string }{
		{`{"kind":"printer","name":"x","protocol":1,"pid":1}`, `kind "printer" is none of "driver", "timer", "scheduler"`},
		{`{"kind":"timer","name":"","protocol":1,"pid":1}`, "name: empty"},
		{`{"kind":"timer","name":"a\u0007b","protocol":1,"pid":1}`, `name: "a\ab" holds the unprintable character U+0007`},
		{`{"kind":"timer","name":"w","protocol":0,"pid":1}`, "protocol 0, want >= 1"},
		{`{"kind":"timer","name":"w","protocol":1,"pid":-1}`, "pid -1, want >= 1"},
		{`{"kind":"timer","name":"w","protocol":1,"pid":1,"capabilities":[""]}`, "capabilities[0]: empty"},
		{`{"kind":`, "decoding the plugin's Info"},
	} {
		_, err := DecodeInfo([]byte(c.json))
		assert.ErrorContains(t, err, c.want, c.json)
	}
}
