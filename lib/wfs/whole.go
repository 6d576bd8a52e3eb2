package wfs

import (
	"io"
	"io/fs"
	"os"

	"github.com/weftrt/weft/core"
)

// writeAtFull writes all of p at off through a FileIO driver.
func writeAtFull(fio core.FileIO, h core.Handle, p []byte, off int64) core.Future[core.Result[int]] {
	return &atFull{fio: fio, h: h, p: p, off: off, write: true}
}

// atFull reads len(p) bytes at off through a FileIO driver (or writes all
// of p), issuing as many operations as it takes: io.ReaderAt's and
// io.WriterAt's contracts on top of operations that may be short.
type atFull struct {
	fio   core.FileIO
	h     core.Handle
	p     []byte
	off   int64
	write bool
	n     int
	cur   core.Future[core.Result[int]]
}

func (a *atFull) Poll(cx *core.Context) (core.Result[int], bool) {
	for a.n < len(a.p) {
		if a.cur == nil {
			if a.write {
				a.cur = a.fio.WriteAt(a.h, a.p[a.n:], a.off+int64(a.n))
			} else {
				a.cur = a.fio.ReadAt(a.h, a.p[a.n:], a.off+int64(a.n))
			}
		}
		r, ok := a.cur.Poll(cx)
		if !ok {
			return core.Result[int]{}, false
		}
		a.cur = nil
		a.n += r.Value
		switch {
		case r.Err != nil:
			return core.Result[int]{Value: a.n, Err: r.Err}, true
		case r.Value == 0 && a.write:
			return core.Result[int]{Value: a.n, Err: io.ErrShortWrite}, true
		case r.Value == 0:
			return core.Result[int]{Value: a.n, Err: io.EOF}, true
		}
	}
	return core.Result[int]{Value: a.n}, true
}

func (a *atFull) Drop() {
	if a.cur != nil {
		core.Drop(a.cur)
		a.cur = nil
	}
}

// ReadFile returns a future of the whole contents of path. A successful
// read resolves with a nil error, not io.EOF.
func ReadFile(path string) core.Future[core.Result[[]byte]] {
	return &wholeFile{path: path}
}

// WriteFile returns a future that writes data to path, creating it with
// perm (before the umask) or truncating it, as os.WriteFile. data is copied
// or written before the future resolves; it may be reused after.
func WriteFile(path string, data []byte, perm os.FileMode) core.Future[core.Result[core.Unit]] {
	return &unitOf{&wholeFile{path: path, write: true, data: data, perm: perm}}
}

// unitOf drops the value of a WriteFile's result.
type unitOf struct{ w *wholeFile }

func (u *unitOf) Poll(cx *core.Context) (core.Result[core.Unit], bool) {
	r, ok := u.w.Poll(cx)
	return core.Result[core.Unit]{Err: r.Err}, ok
}

func (u *unitOf) Drop() { u.w.Drop() }

// wholeFile is ReadFile and WriteFile: one os call on the blocking pool, or
// open, read or write, close through a FileIO driver.
type wholeFile struct {
	path  string
	write bool
	data  []byte
	perm  os.FileMode

	pool core.Future[core.Result[[]byte]]

	// The driver path's state.
	file  *File
	open  core.Future[core.Result[*File]]
	rw    core.Future[core.Result[int]]
	close core.Future[core.Result[core.Unit]]
	buf   []byte
	err   error
}

func (w *wholeFile) Poll(cx *core.Context) (core.Result[[]byte], bool) {
	if w.pool == nil && w.open == nil && w.file == nil {
		if wk := cx.Worker(); wk == nil || !isFileIO(wk.Driver()) {
			path, data, perm, write := w.path, w.data, w.perm, w.write
			if write {
				data = clone(data)
			}
			w.pool = newBlockingOp(spawnerOf(cx), func() ([]byte, error) {
				if write {
					return nil, os.WriteFile(path, data, perm)
				}
				return os.ReadFile(path)
			}, nil)
		} else if w.write {
			w.open = OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, w.perm)
		} else {
			w.open = Open(w.path)
		}
	}
	if w.pool != nil {
		return w.pool.Poll(cx)
	}
	return w.pollDriver(cx)
}

func isFileIO(d core.Driver) bool {
	_, ok := d.(core.FileIO)
	return ok
}

// pollDriver runs open, then reads (or writes) to the end, then close.
func (w *wholeFile) pollDriver(cx *core.Context) (core.Result[[]byte], bool) {
	if w.open != nil {
		r, ok := w.open.Poll(cx)
		if !ok {
			return core.Result[[]byte]{}, false
		}
		w.open = nil
		if r.Err != nil {
			return core.Result[[]byte]{Err: r.Err}, true
		}
		w.file = r.Value
	}
	for w.close == nil {
		if w.rw == nil {
			if w.write {
				w.rw = writeAtFull(w.file.fio, w.file.h, w.data, 0)
			} else {
				if len(w.buf) == cap(w.buf) {
					w.buf = append(w.buf, make([]byte, max(len(w.buf), 64<<10))...)[:len(w.buf)]
				}
				w.rw = w.file.fio.ReadAt(w.file.h, w.buf[len(w.buf):cap(w.buf)], int64(len(w.buf)))
			}
		}
		r, ok := w.rw.Poll(cx)
		if !ok {
			return core.Result[[]byte]{}, false
		}
		w.rw = nil
		if !w.write {
			w.buf = w.buf[:len(w.buf)+r.Value]
		}
		if w.write || r.Err != nil || r.Value == 0 {
			op := "read"
			if w.write {
				op = "write"
			}
			if r.Err != io.EOF {
				w.err = pathErr(op, w.path, r.Err)
			}
			w.close = w.file.Close()
		}
	}
	r, ok := w.close.Poll(cx)
	if !ok {
		return core.Result[[]byte]{}, false
	}
	err := w.err
	if err == nil {
		err = r.Err
	}
	if w.write {
		return core.Result[[]byte]{Err: err}, true
	}
	return core.Result[[]byte]{Value: w.buf, Err: err}, true
}

func (w *wholeFile) Drop() {
	for _, f := range []any{w.pool, w.open, w.rw, w.close} {
		if f != nil {
			core.Drop(f)
		}
	}
	if w.file != nil && w.close == nil {
		// Start the close and let it finish on its own: it is polled once
		// to submit it and then forgotten, not dropped (dropping would
		// cancel it), so the file does not leak.
		w.file.Close().Poll(core.NewContext(nil))
	}
}

// Stat returns a future of path's fs.FileInfo (os.Stat).
func Stat(path string) core.Future[core.Result[fs.FileInfo]] {
	return &lazyOp[fs.FileInfo]{fn: func() (fs.FileInfo, error) { return os.Stat(path) }}
}

// Remove returns a future that removes path (os.Remove).
func Remove(path string) core.Future[core.Result[core.Unit]] {
	return &lazyOp[core.Unit]{fn: func() (core.Unit, error) { return core.Unit{}, os.Remove(path) }}
}

// lazyOp is a blocking call whose spawner is learnt at the first poll.
type lazyOp[T any] struct {
	fn    func() (T, error)
	inner *blockingOp[T]
}

func (l *lazyOp[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	if l.inner == nil {
		l.inner = newBlockingOp(spawnerOf(cx), l.fn, nil)
	}
	return l.inner.Poll(cx)
}

func (l *lazyOp[T]) Drop() {
	if l.inner != nil {
		l.inner.Drop()
	}
}
