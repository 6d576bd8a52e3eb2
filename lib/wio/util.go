package wio

import (
	"errors"
	"io"

	"github.com/weftrt/weft/core"
)

// ReadFull returns a future that reads exactly len(p) bytes into p. It
// resolves to (len(p), nil); to (0, io.EOF) if the stream ended before the
// first byte; to (n, io.ErrUnexpectedEOF) if it ended part-way; or to
// (n, err) on another error. Dropping it drops the read in flight; the
// bytes already read stay in p.
func ReadFull(r Reader, p []byte) core.Future[core.Result[int]] {
	return &readFull{r: r, p: p}
}

type readFull struct {
	r   Reader
	p   []byte
	n   int
	cur core.Future[core.Result[int]]
}

func (f *readFull) Poll(cx *core.Context) (core.Result[int], bool) {
	for f.n < len(f.p) {
		if f.cur == nil {
			f.cur = f.r.Read(f.p[f.n:])
		}
		res, ok := f.cur.Poll(cx)
		if !ok {
			return core.Result[int]{}, false
		}
		f.cur = nil
		f.n += res.Value
		switch {
		case errors.Is(res.Err, io.EOF):
			if f.n == 0 {
				return core.Result[int]{Err: io.EOF}, true
			}
			if f.n < len(f.p) {
				return core.Result[int]{Value: f.n, Err: io.ErrUnexpectedEOF}, true
			}
		case res.Err != nil:
			return core.Result[int]{Value: f.n, Err: res.Err}, true
		case res.Value == 0:
			return core.Result[int]{Value: f.n, Err: io.ErrNoProgress}, true
		}
	}
	return core.Result[int]{Value: f.n}, true
}

func (f *readFull) Drop() { dropCur(&f.cur) }

// dropCur drops the operation in flight, if any.
func dropCur[T any](cur *core.Future[T]) {
	if *cur != nil {
		core.Drop(*cur)
		*cur = nil
	}
}

// WriteAll returns a future that writes all of p, issuing as many writes as
// it takes. It resolves to (len(p), nil) or to (n, err) with the bytes
// written before the error. Dropping it drops the write in flight.
func WriteAll(w Writer, p []byte) core.Future[core.Result[int]] {
	return &writeAll{w: w, p: p}
}

type writeAll struct {
	w   Writer
	p   []byte
	n   int
	cur core.Future[core.Result[int]]
}

func (f *writeAll) Poll(cx *core.Context) (core.Result[int], bool) {
	for f.n < len(f.p) {
		if f.cur == nil {
			f.cur = f.w.Write(f.p[f.n:])
		}
		res, ok := f.cur.Poll(cx)
		if !ok {
			return core.Result[int]{}, false
		}
		f.cur = nil
		f.n += res.Value
		if res.Err != nil {
			return core.Result[int]{Value: f.n, Err: res.Err}, true
		}
		if res.Value == 0 {
			return core.Result[int]{Value: f.n, Err: io.ErrShortWrite}, true
		}
	}
	return core.Result[int]{Value: f.n}, true
}

func (f *writeAll) Drop() { dropCur(&f.cur) }

// ReadAll returns a future that reads until the end of the stream and
// resolves to everything read. The end of the stream is not an error: a
// successful ReadAll resolves with a nil error.
func ReadAll(r Reader) core.Future[core.Result[[]byte]] {
	return &readAll{r: r, buf: make([]byte, 0, 512)}
}

type readAll struct {
	r   Reader
	buf []byte
	cur core.Future[core.Result[int]]
}

func (f *readAll) Poll(cx *core.Context) (core.Result[[]byte], bool) {
	for {
		if f.cur == nil {
			if len(f.buf) == cap(f.buf) {
				f.buf = append(f.buf, 0)[:len(f.buf)]
			}
			f.cur = f.r.Read(f.buf[len(f.buf):cap(f.buf)])
		}
		res, ok := f.cur.Poll(cx)
		if !ok {
			return core.Result[[]byte]{}, false
		}
		f.cur = nil
		f.buf = f.buf[:len(f.buf)+res.Value]
		switch {
		case errors.Is(res.Err, io.EOF):
			return core.Result[[]byte]{Value: f.buf}, true
		case res.Err != nil:
			return core.Result[[]byte]{Value: f.buf, Err: res.Err}, true
		}
	}
}

func (f *readAll) Drop() { dropCur(&f.cur) }
