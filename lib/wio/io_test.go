package wio_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
)

var eof = io.EOF

func TestDuplexCarriesBytesBothWays(t *testing.T) {
	a, b := wio.Duplex(64)
	require.Equal(t, 5, await(t, a.Write([]byte("hello"))).Value)
	buf := make([]byte, 16)
	r := await(t, b.Read(buf))
	require.NoError(t, r.Err)
	assert.Equal(t, "hello", string(buf[:r.Value]))
	await(t, b.Write([]byte("back")))
	r = await(t, a.Read(buf))
	assert.Equal(t, "back", string(buf[:r.Value]))
}

func TestDuplexWriteWaitsForTheReaderWhenTheBufferIsFull(t *testing.T) {
	a, b := wio.Duplex(4)
	r := await(t, a.Write([]byte("0123456789")))
	require.Equal(t, 4, r.Value, "a write takes what fits")
	w := &counter{}
	pending := a.Write([]byte("89"))
	_, ok := pollOnce(pending, w)
	require.False(t, ok, "a write to a full direction waits")
	got := await(t, b.Read(make([]byte, 2)))
	require.Equal(t, 2, got.Value)
	assert.Equal(t, 1, w.get(), "reading made room and woke the writer")
	res, ok := pollOnce(pending, w)
	require.True(t, ok)
	assert.Equal(t, 2, res.Value)
}

func TestDuplexCloseWriteIsReadAsEOFAfterTheBufferedBytes(t *testing.T) {
	a, b := wio.Duplex(64)
	await(t, a.Write([]byte("last")))
	require.NoError(t, a.CloseWrite())
	got := await(t, wio.ReadAll(b))
	require.NoError(t, got.Err)
	assert.Equal(t, "last", string(got.Value))
	// The other direction still works after a half close.
	await(t, b.Write([]byte("reply")))
	buf := make([]byte, 8)
	assert.Equal(t, 5, await(t, a.Read(buf)).Value)
	assert.True(t, errors.Is(await(t, a.Write([]byte("x"))).Err, syscall.EPIPE), "a write after CloseWrite fails")
}

func TestDuplexWriteToAClosedPeerFailsWithEPIPE(t *testing.T) {
	a, b := wio.Duplex(64)
	require.NoError(t, b.Close())
	err := await(t, a.Write([]byte("x"))).Err
	assert.ErrorIs(t, err, syscall.EPIPE)
	assert.ErrorIs(t, err, io.ErrClosedPipe)
	assert.ErrorIs(t, await(t, a.Read(make([]byte, 1))).Err, io.EOF, "the closed peer wrote nothing more")
}

func TestDuplexOperationsPendingOnAClosedEndFailWithErrClosed(t *testing.T) {
	a, _ := wio.Duplex(1)
	w := &counter{}
	read := a.Read(make([]byte, 1))
	_, ok := pollOnce(read, w)
	require.False(t, ok)
	require.NoError(t, a.Close())
	assert.Equal(t, 1, w.get(), "Close woke the pending read")
	assert.ErrorIs(t, await(t, read).Err, net.ErrClosed)
	assert.ErrorIs(t, a.Close(), net.ErrClosed, "a second Close")
	assert.ErrorIs(t, await(t, a.Write([]byte("x"))).Err, net.ErrClosed)
}

func TestDroppingAPendingDuplexReadNeverWakesItsTask(t *testing.T) {
	a, b := wio.Duplex(8)
	dropped, kept := &counter{}, &counter{}
	r1, r2 := a.Read(make([]byte, 8)), a.Read(make([]byte, 8))
	pollOnce(r1, dropped)
	pollOnce(r2, kept)
	core.Drop(r1)
	await(t, b.Write([]byte("x")))
	assert.Zero(t, dropped.get(), "the dropped read was woken")
	assert.Equal(t, 1, kept.get())
}

func TestReadFullReadsExactlyAcrossShortReads(t *testing.T) {
	s := &script{reads: [][]byte{[]byte("ab"), []byte("c"), []byte("defg")}}
	buf := make([]byte, 5)
	r := await(t, wio.ReadFull(s, buf))
	require.NoError(t, r.Err)
	assert.Equal(t, 5, r.Value)
	assert.Equal(t, "abcde", string(buf))
	assert.Equal(t, 3, s.nreads)
}

func TestReadFullEndingPartWayIsUnexpectedEOF(t *testing.T) {
	r := await(t, wio.ReadFull(&script{reads: [][]byte{[]byte("ab")}}, make([]byte, 5)))
	assert.Equal(t, 2, r.Value)
	assert.ErrorIs(t, r.Err, io.ErrUnexpectedEOF)
	r = await(t, wio.ReadFull(&script{}, make([]byte, 5)))
	assert.Equal(t, 0, r.Value)
	assert.Equal(t, io.EOF, r.Err, "no byte at all is a plain io.EOF")
}

func TestWriteAllWritesEverythingThroughShortWrites(t *testing.T) {
	s := &script{maxWrite: 3}
	data := []byte("0123456789")
	r := await(t, wio.WriteAll(s, data))
	require.NoError(t, r.Err)
	assert.Equal(t, 10, r.Value)
	assert.Equal(t, data, s.written)
	assert.Equal(t, 4, s.nwrites)
}

func TestWriteAllStopsAtTheFirstError(t *testing.T) {
	boom := errors.New("boom")
	r := await(t, wio.WriteAll(&script{writeErr: boom}, []byte("x")))
	assert.ErrorIs(t, r.Err, boom)
}

func TestReadAllReadsToTheEndWithoutAnError(t *testing.T) {
	big := bytes.Repeat([]byte("z"), 5000)
	r := await(t, wio.ReadAll(&script{reads: [][]byte{[]byte("a"), big}}))
	require.NoError(t, r.Err)
	assert.Equal(t, append([]byte("a"), big...), r.Value)
}

func TestCopyCopiesUntilEOFThroughShortWritesAndFlushes(t *testing.T) {
	src := &script{reads: [][]byte{[]byte("hello, "), []byte("world")}}
	dst := &script{maxWrite: 2}
	bw := wio.NewBufWriterSize(dst, 16)
	r := await(t, wio.Copy(bw, src))
	require.NoError(t, r.Err)
	assert.EqualValues(t, 12, r.Value)
	assert.Equal(t, "hello, world", string(dst.written), "Copy flushed the buffered writer at the end")
}

func TestCopyBufferRefusesAnEmptyBuffer(t *testing.T) {
	assert.Panics(t, func() { wio.CopyBuffer(&script{}, &script{}, nil) })
}

func TestCopyReportsTheCountSoFarWithAWriteError(t *testing.T) {
	boom := errors.New("boom")
	r := await(t, wio.Copy(&script{writeErr: boom}, &script{reads: [][]byte{[]byte("abc")}}))
	assert.ErrorIs(t, r.Err, boom)
	assert.EqualValues(t, 3, r.Value, "bytes read before the failed write")
}

func TestCopyBidirectionalProxiesBothWaysAndShutsEachDown(t *testing.T) {
	client, proxyFront := wio.Duplex(64)
	proxyBack, server := wio.Duplex(64)
	proxy := wio.CopyBidirectional(proxyFront, proxyBack)
	reqBody := bytes.Repeat([]byte("q"), 1000)
	respBody := bytes.Repeat([]byte("r"), 700)
	res := awaitAll[any](t,
		futureOf(proxy),
		futureOf(serveOnce(server, respBody)),
		futureOf(sendAndReceive(client, reqBody)),
	)
	tr := res[0].(core.Result[wio.Transferred])
	require.NoError(t, tr.Err)
	assert.Equal(t, wio.Transferred{AToB: 1000, BToA: 700}, tr.Value)
	assert.Equal(t, reqBody, res[1].(core.Result[[]byte]).Value, "the server got the request and its end")
	assert.Equal(t, respBody, res[2].(core.Result[[]byte]).Value, "the client got the response and its end")
}

// serveOnce reads a request to its end, then writes resp and shuts down.
func serveOnce(s *wio.DuplexStream, resp []byte) core.Future[core.Result[[]byte]] {
	read := wio.ReadAll(s)
	var req []byte
	var write core.Future[core.Result[int]]
	return core.PollFunc[core.Result[[]byte]](func(cx *core.Context) (core.Result[[]byte], bool) {
		if write == nil {
			r, ok := read.Poll(cx)
			if !ok {
				return r, false
			}
			req = r.Value
			write = wio.WriteAll(s, resp)
		}
		if _, ok := write.Poll(cx); !ok {
			return core.Result[[]byte]{}, false
		}
		return core.Result[[]byte]{Value: req, Err: s.CloseWrite()}, true
	})
}

// sendAndReceive writes req, shuts down, and reads the reply to its end;
// writing and reading go on at once.
func sendAndReceive(s *wio.DuplexStream, req []byte) core.Future[core.Result[[]byte]] {
	write := wio.WriteAll(s, req)
	read := wio.ReadAll(s)
	wrote := false
	return core.PollFunc[core.Result[[]byte]](func(cx *core.Context) (core.Result[[]byte], bool) {
		if !wrote {
			if _, ok := write.Poll(cx); ok {
				wrote = true
				s.CloseWrite()
			}
		}
		r, ok := read.Poll(cx)
		if !ok || !wrote {
			if ok {
				read = wio.Ready(r.Value, r.Err)
			}
			return core.Result[[]byte]{}, false
		}
		return r, true
	})
}

// futureOf erases a future's type.
func futureOf[T any](f core.Future[T]) core.Future[any] {
	return core.PollFunc[any](func(cx *core.Context) (any, bool) { return f.Poll(cx) })
}

func TestCopyBidirectionalReturnsTheFirstErrorAndDropsTheOtherSide(t *testing.T) {
	boom := errors.New("boom")
	a := &rw{r: &script{reads: [][]byte{[]byte("x")}}, w: &script{}}
	b := &rw{r: &pending{}, w: &script{writeErr: boom}}
	r := await(t, wio.CopyBidirectional(a, b))
	assert.ErrorIs(t, r.Err, boom)
	assert.Equal(t, 1, b.r.(*pending).drops, "the pending read of the other direction was dropped")
}

// rw joins a reader and a writer.
type rw struct {
	r wio.Reader
	w wio.Writer
}

func (x *rw) Read(p []byte) core.Future[core.Result[int]]  { return x.r.Read(p) }
func (x *rw) Write(p []byte) core.Future[core.Result[int]] { return x.w.Write(p) }

// pending is a Reader whose reads never complete and count their drops.
type pending struct{ drops int }

func (p *pending) Read([]byte) core.Future[core.Result[int]] { return &pendingOp{p} }

type pendingOp struct{ p *pending }

func (o *pendingOp) Poll(*core.Context) (core.Result[int], bool) { return core.Result[int]{}, false }
func (o *pendingOp) Drop()                                       { o.p.drops++ }

func TestSplitHalvesAreUsedByTwoTasksAtOnce(t *testing.T) {
	a, b := wio.Duplex(16)
	r, w := wio.Split(a)
	data := bytes.Repeat([]byte("s"), 200)
	write := wio.WriteAll(w, data)
	got := make([]byte, 200)
	res := awaitAll[any](t,
		futureOf(core.PollFunc[core.Result[int]](func(cx *core.Context) (core.Result[int], bool) {
			r, ok := write.Poll(cx)
			if ok {
				w.CloseWrite() // ends the echo below
			}
			return r, ok
		})),
		futureOf(wio.ReadFull(r, got)),
		futureOf(wio.Copy(b, b)), // echo on the other end, until the write half closes
	)
	assert.Equal(t, 200, res[0].(core.Result[int]).Value)
	assert.Equal(t, 200, res[1].(core.Result[int]).Value)
	assert.Equal(t, data, got)
	assert.NoError(t, res[2].(core.Result[int64]).Err)
	assert.Same(t, wio.ReadWriter(a), wio.Unsplit(r, w))
	_, w2 := wio.Split(b)
	assert.Panics(t, func() { wio.Unsplit(r, w2) })
}
