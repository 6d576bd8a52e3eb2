package wio

import (
	"bytes"
	"io"

	"github.com/weftrt/weft/core"
)

// DefaultBufSize is the buffer size of NewBufReader and NewBufWriter.
const DefaultBufSize = 8 << 10

// BufReader adds a buffer to a Reader, so that many small reads cost one
// read of the underlying stream, and adds ReadUntil. One operation at a
// time: start the next read only after the previous one resolved or was
// dropped.
type BufReader struct {
	r   Reader
	buf []byte
	// buf[rpos:wpos] holds bytes read from r and not yet returned.
	rpos, wpos int
	// err is an error (or io.EOF) from r that arrived with data; it is
	// returned once the buffer is drained.
	err error
}

// NewBufReader returns a BufReader with a buffer of DefaultBufSize.
func NewBufReader(r Reader) *BufReader { return NewBufReaderSize(r, DefaultBufSize) }

// NewBufReaderSize returns a BufReader with a buffer of size bytes (at
// least 16).
func NewBufReaderSize(r Reader, size int) *BufReader {
	return &BufReader{r: r, buf: make([]byte, max(size, 16))}
}

// Buffered returns the number of bytes that can be read without reading
// the underlying stream.
func (b *BufReader) Buffered() int { return b.wpos - b.rpos }

// Read returns a future that reads into p from the buffer, refilling it
// with one read of the underlying stream when it is empty. A read of at
// least the buffer's size with an empty buffer goes straight to the
// stream.
func (b *BufReader) Read(p []byte) core.Future[core.Result[int]] {
	if len(p) == 0 {
		return Ready(0, nil)
	}
	if b.rpos < b.wpos {
		n := copy(p, b.buf[b.rpos:b.wpos])
		b.rpos += n
		return Ready(n, nil)
	}
	if err := b.takeErr(); err != nil {
		return Ready(0, err)
	}
	if len(p) >= len(b.buf) {
		return b.r.Read(p)
	}
	return &bufRead{b: b, p: p}
}

// takeErr returns and forgets the pending error, if any.
func (b *BufReader) takeErr() error {
	err := b.err
	b.err = nil
	return err
}

type bufRead struct {
	b   *BufReader
	p   []byte
	cur core.Future[core.Result[int]]
}

func (f *bufRead) Poll(cx *core.Context) (core.Result[int], bool) {
	if f.cur == nil {
		f.cur = f.b.r.Read(f.b.buf)
	}
	res, ok := f.cur.Poll(cx)
	if !ok {
		return core.Result[int]{}, false
	}
	f.cur = nil
	b := f.b
	b.rpos, b.wpos = 0, res.Value
	if res.Value == 0 {
		return core.Result[int]{Err: res.Err}, true
	}
	b.err = res.Err
	n := copy(f.p, b.buf[:b.wpos])
	b.rpos = n
	return core.Result[int]{Value: n}, true
}

func (f *bufRead) Drop() { dropCur(&f.cur) }

// ReadUntil returns a future that reads until the first delim and resolves
// to the bytes up to and including it, in a new slice. If the stream ends
// first it resolves to what was read and io.EOF. Bytes read before an
// error are returned with it. Dropping it keeps the bytes read so far in
// the buffer for the next read.
func (b *BufReader) ReadUntil(delim byte) core.Future[core.Result[[]byte]] {
	return &readUntil{b: b, delim: delim}
}

type readUntil struct {
	b     *BufReader
	delim byte
	out   []byte
	cur   core.Future[core.Result[int]]
}

func (f *readUntil) Poll(cx *core.Context) (core.Result[[]byte], bool) {
	b := f.b
	for {
		if i := bytes.IndexByte(b.buf[b.rpos:b.wpos], f.delim); i >= 0 {
			f.out = append(f.out, b.buf[b.rpos:b.rpos+i+1]...)
			b.rpos += i + 1
			return core.Result[[]byte]{Value: f.out}, true
		}
		if err := b.takeErr(); err != nil {
			f.out = append(f.out, b.buf[b.rpos:b.wpos]...)
			b.rpos = b.wpos
			return core.Result[[]byte]{Value: f.out, Err: err}, true
		}
		if f.cur == nil {
			// Keep the unread bytes at the front and fill behind them;
			// a full buffer moves to out first.
			if b.rpos > 0 {
				b.wpos = copy(b.buf, b.buf[b.rpos:b.wpos])
				b.rpos = 0
			}
			if b.wpos == len(b.buf) {
				f.out = append(f.out, b.buf...)
				b.rpos, b.wpos = 0, 0
			}
			f.cur = b.r.Read(b.buf[b.wpos:])
		}
		res, ok := f.cur.Poll(cx)
		if !ok {
			return core.Result[[]byte]{}, false
		}
		f.cur = nil
		b.wpos += res.Value
		if res.Err != nil {
			b.err = res.Err
		} else if res.Value == 0 {
			b.err = io.ErrNoProgress
		}
	}
}

// Drop drops the read in flight. Bytes moved to the result so far are
// lost; those still in the buffer stay there.
func (f *readUntil) Drop() { dropCur(&f.cur) }
