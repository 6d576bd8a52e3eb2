package wio

import (
	"io"

	"github.com/weftrt/weft/core"
)

// BufWriter adds a buffer to a Writer, so that many small writes cost one
// write of the underlying stream. Written bytes stay in the buffer until
// it fills or Flush is called; call Flush before closing the stream. One
// operation at a time: start the next only after the previous one resolved
// or was dropped.
type BufWriter struct {
	w   Writer
	buf []byte
	// buf[start:n] is buffered and not yet written.
	start, n int
}

// NewBufWriter returns a BufWriter with a buffer of DefaultBufSize.
func NewBufWriter(w Writer) *BufWriter { return NewBufWriterSize(w, DefaultBufSize) }

// NewBufWriterSize returns a BufWriter with a buffer of size bytes (at
// least 16).
func NewBufWriterSize(w Writer, size int) *BufWriter {
	return &BufWriter{w: w, buf: make([]byte, max(size, 16))}
}

// Buffered returns the number of bytes written but not yet flushed.
func (b *BufWriter) Buffered() int { return b.n - b.start }

// Available returns how many bytes fit in the buffer without a write of the
// underlying stream.
func (b *BufWriter) Available() int { return len(b.buf) - b.n }

// Write returns a future that buffers p. When p does not fit, the buffer is
// written out first; a p of at least the buffer's size then goes straight
// to the stream (and that write may be short, as any Write). It resolves
// to the bytes of p accepted.
func (b *BufWriter) Write(p []byte) core.Future[core.Result[int]] {
	if len(p) <= b.Available() {
		b.n += copy(b.buf[b.n:], p)
		return Ready(len(p), nil)
	}
	return &bufWrite{b: b, p: p}
}

type bufWrite struct {
	b   *BufWriter
	p   []byte
	cur core.Future[core.Result[int]]
}

func (f *bufWrite) Poll(cx *core.Context) (core.Result[int], bool) {
	b := f.b
	for b.start < b.n {
		if err, ok := b.flushStep(cx, &f.cur); !ok {
			return core.Result[int]{}, false
		} else if err != nil {
			return core.Result[int]{Err: err}, true
		}
	}
	b.start, b.n = 0, 0
	if len(f.p) < len(b.buf) {
		b.n = copy(b.buf, f.p)
		return core.Result[int]{Value: len(f.p)}, true
	}
	if f.cur == nil {
		f.cur = b.w.Write(f.p)
	}
	res, ok := f.cur.Poll(cx)
	if ok {
		f.cur = nil
	}
	return res, ok
}

func (f *bufWrite) Drop() { dropCur(&f.cur) }

// flushStep makes progress writing buf[start:n]: it reports (nil, true)
// after a write, (err, true) on failure and (nil, false) when pending.
func (b *BufWriter) flushStep(cx *core.Context, cur *core.Future[core.Result[int]]) (error, bool) {
	if *cur == nil {
		*cur = b.w.Write(b.buf[b.start:b.n])
	}
	res, ok := (*cur).Poll(cx)
	if !ok {
		return nil, false
	}
	*cur = nil
	b.start += res.Value
	if res.Err != nil {
		return res.Err, true
	}
	if res.Value == 0 {
		return io.ErrShortWrite, true
	}
	return nil, true
}

// Flush returns a future that writes every buffered byte, then flushes the
// underlying writer if it is a Flusher. After an error the bytes not
// written stay buffered.
func (b *BufWriter) Flush() core.Future[core.Result[core.Unit]] {
	return &bufFlush{b: b}
}

type bufFlush struct {
	b     *BufWriter
	cur   core.Future[core.Result[int]]
	inner core.Future[core.Result[core.Unit]]
}

func (f *bufFlush) Poll(cx *core.Context) (core.Result[core.Unit], bool) {
	b := f.b
	for b.start < b.n {
		if err, ok := b.flushStep(cx, &f.cur); !ok {
			return core.Result[core.Unit]{}, false
		} else if err != nil {
			return core.Result[core.Unit]{Err: err}, true
		}
	}
	b.start, b.n = 0, 0
	fl, ok := b.w.(Flusher)
	if !ok {
		return core.Result[core.Unit]{}, true
	}
	if f.inner == nil {
		f.inner = fl.Flush()
	}
	res, ok := f.inner.Poll(cx)
	if ok {
		f.inner = nil
	}
	return res, ok
}

func (f *bufFlush) Drop() {
	dropCur(&f.cur)
	dropCur(&f.inner)
}

// CloseWrite shuts down the underlying stream's write side if it is a
// CloseWriter. It does not flush: flush first.
func (b *BufWriter) CloseWrite() error {
	if cw, ok := b.w.(CloseWriter); ok {
		return cw.CloseWrite()
	}
	return nil
}
