package wio_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
)

func TestBufReaderServesSmallReadsFromOneFill(t *testing.T) {
	s := &script{reads: [][]byte{[]byte("abcdefgh")}}
	br := wio.NewBufReaderSize(s, 64)
	buf := make([]byte, 3)
	var got []byte
	for {
		r := await(t, br.Read(buf))
		got = append(got, buf[:r.Value]...)
		if r.Err != nil {
			assert.ErrorIs(t, r.Err, io.EOF)
			break
		}
	}
	assert.Equal(t, "abcdefgh", string(got))
	assert.Equal(t, 2, s.nreads, "one read filled the buffer; one more found the end")
}

func TestBufReaderPassesLargeReadsStraightThrough(t *testing.T) {
	s := &script{reads: [][]byte{make([]byte, 100)}}
	br := wio.NewBufReaderSize(s, 16)
	r := await(t, br.Read(make([]byte, 100)))
	assert.Equal(t, 100, r.Value)
	assert.Zero(t, br.Buffered())
}

func TestReadUntilFindsTheDelimiterAcrossFills(t *testing.T) {
	s := &script{reads: [][]byte{[]byte("first li"), []byte("ne\nsecond line that is long\ntail")}}
	br := wio.NewBufReaderSize(s, 16)
	r := await(t, br.ReadUntil('\n'))
	require.NoError(t, r.Err)
	assert.Equal(t, "first line\n", string(r.Value))
	r = await(t, br.ReadUntil('\n'))
	require.NoError(t, r.Err)
	assert.Equal(t, "second line that is long\n", string(r.Value), "a line longer than the buffer")
	r = await(t, br.ReadUntil('\n'))
	assert.ErrorIs(t, r.Err, io.EOF)
	assert.Equal(t, "tail", string(r.Value), "the bytes before the end come with io.EOF")
}

func TestBufWriterHoldsWritesUntilFullOrFlushed(t *testing.T) {
	s := &script{}
	bw := wio.NewBufWriterSize(s, 16)
	for range 3 {
		require.Equal(t, 5, await(t, bw.Write([]byte("12345"))).Value)
	}
	assert.Zero(t, s.nwrites, "15 bytes fit in the buffer")
	assert.Equal(t, 15, bw.Buffered())
	assert.Equal(t, 1, bw.Available())
	await(t, bw.Write([]byte("abcde")))
	assert.Equal(t, 1, s.nwrites, "a write that did not fit flushed the buffer first")
	require.NoError(t, await(t, bw.Flush()).Err)
	assert.Equal(t, "123451234512345abcde", string(s.written))
	assert.Zero(t, bw.Buffered())
}

func TestBufWriterFlushSurvivesShortWrites(t *testing.T) {
	s := &script{maxWrite: 3}
	bw := wio.NewBufWriterSize(s, 32)
	await(t, bw.Write([]byte("0123456789")))
	require.NoError(t, await(t, bw.Flush()).Err)
	assert.Equal(t, "0123456789", string(s.written))
	assert.Equal(t, 4, s.nwrites)
}

// stuckStream is a Reader and Writer whose operations stay pending and
// count their drops.
type stuckStream struct {
	droppedReads, droppedWrites int
}

func (s *stuckStream) Read([]byte) core.Future[core.Result[int]] {
	return &stuckOp{dropped: &s.droppedReads}
}

func (s *stuckStream) Write([]byte) core.Future[core.Result[int]] {
	return &stuckOp{dropped: &s.droppedWrites}
}

type stuckOp struct{ dropped *int }

func (o *stuckOp) Poll(*core.Context) (core.Result[int], bool) { return core.Result[int]{}, false }
func (o *stuckOp) Drop()                                       { *o.dropped++ }

func TestDroppingACopyDropsItsPendingRead(t *testing.T) {
	src := &stuckStream{}
	c := wio.Copy(&script{}, src)
	_, ok := pollOnce(c, core.NoopWaker)
	require.False(t, ok)
	core.Drop(c)
	assert.Equal(t, 1, src.droppedReads)
}

func TestDroppingACopyDropsItsPendingWrite(t *testing.T) {
	dst := &stuckStream{}
	c := wio.Copy(dst, &script{reads: [][]byte{[]byte("x")}})
	_, ok := pollOnce(c, core.NoopWaker)
	require.False(t, ok)
	core.Drop(c)
	assert.Equal(t, 1, dst.droppedWrites)
	assert.Zero(t, dst.droppedReads)
}
