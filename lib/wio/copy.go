package wio

import (
	"errors"
	"io"

	"github.com/weftrt/weft/core"
)

// CopyBufferSize is the buffer Copy and CopyBidirectional use per
// direction: 8 KiB, as Tokio's.
const CopyBufferSize = 8 << 10

// Copy returns a future that copies from src to dst until src ends, then
// flushes dst if it is a [Flusher]. It resolves to the number of bytes
// copied and nil, or to the count so far and the first error (bytes read
// but not yet written when a write fails are lost). The end of src is not
// an error. Dropping it drops the operation in flight.
//
// The copy reads and writes with operations of its own ([Op]), so several
// copies may read one source at once, each from its own task: every byte
// goes to exactly one of them. Their writes to one shared destination may
// interleave where a write is short (they do not take a [WriteLocker]'s
// turns).
func Copy(dst Writer, src Reader) core.Future[core.Result[int64]] {
	return CopyBuffer(dst, src, make([]byte, CopyBufferSize))
}

// CopyBuffer is Copy through buf. It panics if buf is empty: a read into
// an empty buffer resolves to zero bytes, which would read as the end of
// src.
func CopyBuffer(dst Writer, src Reader, buf []byte) core.Future[core.Result[int64]] {
	if len(buf) == 0 {
		panic("weft/io: CopyBuffer with an empty buffer")
	}
	return &copyFuture{c: newCopier(dst, src, buf)}
}

type copyFuture struct{ c copier }

func (f *copyFuture) Poll(cx *core.Context) (core.Result[int64], bool) {
	n, err, ok := f.c.poll(cx)
	if !ok {
		return core.Result[int64]{}, false
	}
	return core.Result[int64]{Value: n, Err: err}, true
}

func (f *copyFuture) Drop() { f.c.drop() }

// copier is one direction of a copy (Tokio's CopyBuffer): it reads a chunk
// into buf, writes it out in as many writes as it takes, and repeats until
// the reader ends, then flushes the writer. Its state survives between
// polls, so a pending read or write loses nothing.
type copier struct {
	dst Writer
	// rd and wr are the copy's own operations on src and dst: two copies
	// from one stream never share one, and a copy between streams whose
	// futures re-arm allocates nothing per chunk.
	rd, wr Op
	buf    []byte
	// buf[pos:end] is read but not yet written.
	pos, end int
	total    int64
	eof      bool

	flush core.Future[core.Result[core.Unit]]
}

func newCopier(dst Writer, src Reader, buf []byte) copier {
	return copier{dst: dst, rd: ReadOp(src), wr: WriteOp(dst), buf: buf}
}

// writeStep makes progress writing buf[pos:end].
func (c *copier) writeStep(cx *core.Context) (core.Result[int], bool) {
	n, err, ok := c.wr.Poll(cx, c.buf[c.pos:c.end])
	return core.Result[int]{Value: n, Err: err}, ok
}

// readStep makes progress reading into buf.
func (c *copier) readStep(cx *core.Context) (core.Result[int], bool) {
	n, err, ok := c.rd.Poll(cx, c.buf)
	return core.Result[int]{Value: n, Err: err}, ok
}

func (c *copier) poll(cx *core.Context) (int64, error, bool) {
	for {
		if c.pos < c.end {
			res, ok := c.writeStep(cx)
			if !ok {
				return 0, nil, false
			}
			c.pos += res.Value
			if res.Err != nil {
				return c.total, res.Err, true
			}
			if res.Value == 0 {
				return c.total, io.ErrShortWrite, true
			}
			continue
		}
		if c.eof {
			fl, ok := c.dst.(Flusher)
			if !ok {
				return c.total, nil, true
			}
			if c.flush == nil {
				c.flush = fl.Flush()
			}
			res, ok := c.flush.Poll(cx)
			if !ok {
				return 0, nil, false
			}
			c.flush = nil
			return c.total, res.Err, true
		}
		res, ok := c.readStep(cx)
		if !ok {
			return 0, nil, false
		}
		c.pos, c.end = 0, res.Value
		c.total += int64(res.Value)
		switch {
		case errors.Is(res.Err, io.EOF):
			c.eof = true
		case res.Err != nil:
			return c.total, res.Err, true
		case res.Value == 0:
			return c.total, io.ErrNoProgress, true
		}
	}
}

func (c *copier) drop() {
	c.rd.Cancel()
	c.wr.Cancel()
	dropCur(&c.flush)
}

// Transferred is what CopyBidirectional moved in each direction.
type Transferred struct {
	AToB, BToA int64
}

// CopyBidirectional returns a future that copies a to b and b to a at the
// same time, each direction through its own 8 KiB buffer, until both have
// ended. When one direction's source ends, its destination's write side is
// shut down (CloseWrite, after a flush) if it is a [CloseWriter], so the
// other end sees the end of the stream: the shape of a proxy. Both
// directions are advanced on every poll before either result is looked at,
// so neither starves the other.
//
// It resolves to the bytes copied each way and nil, or to the counts so far
// and the first error of either direction; the other direction's operation
// in flight is then dropped and data it had read is lost (Tokio's
// copy_bidirectional gives no all-or-nothing guarantee either).
func CopyBidirectional(a, b ReadWriter) core.Future[core.Result[Transferred]] {
	return &bidi{
		ab: transfer{c: newCopier(b, a, make([]byte, CopyBufferSize))},
		ba: transfer{c: newCopier(a, b, make([]byte, CopyBufferSize))},
	}
}

type bidi struct {
	ab, ba transfer
}

// transfer is one direction of CopyBidirectional: running (copying), then
// shut down, then done.
type transfer struct {
	c    copier
	done bool
}

func (t *transfer) poll(cx *core.Context) (error, bool) {
	if t.done {
		return nil, true
	}
	_, err, ok := t.c.poll(cx)
	if !ok {
		return nil, false
	}
	if err == nil {
		if cw, isCW := t.c.dst.(CloseWriter); isCW {
			err = cw.CloseWrite()
		}
	}
	t.done = true
	return err, true
}

func (f *bidi) Poll(cx *core.Context) (core.Result[Transferred], bool) {
	errAB, okAB := f.ab.poll(cx)
	errBA, okBA := f.ba.poll(cx)
	res := Transferred{AToB: f.ab.c.total, BToA: f.ba.c.total}
	err := errAB
	if err == nil {
		err = errBA
	}
	if err != nil {
		f.Drop()
		return core.Result[Transferred]{Value: res, Err: err}, true
	}
	if !okAB || !okBA {
		return core.Result[Transferred]{}, false
	}
	return core.Result[Transferred]{Value: res}, true
}

func (f *bidi) Drop() {
	f.ab.c.drop()
	f.ba.c.drop()
}
