package wfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// File is an open file. Create one with Open, Create or OpenFile.
type File struct {
	path string
	// spawn runs blocking calls: the pool path's every operation, and the
	// driver path's Stat.
	spawn spawner
	// f is the open file on the pool path; nil on the driver path.
	f *os.File
	// fio and h are the driver and handle on the driver path.
	fio core.FileIO
	h   core.Handle
	// off is the file position of the driver path's Read and Write (the
	// pool path uses the system's). One sequential operation at a time.
	off    int64
	closed atomic.Bool
}

// Open opens path for reading.
func Open(path string) core.Future[core.Result[*File]] {
	return OpenFile(path, os.O_RDONLY, 0)
}

// Create creates or truncates path and opens it for reading and writing,
// with permissions 0666 before the umask, as os.Create.
func Create(path string) core.Future[core.Result[*File]] {
	return OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// OpenFile opens path with flag (os.O_RDONLY, os.O_CREATE, ...) and perm,
// as os.OpenFile. Where the file's operations run is decided at the first
// poll (see the package documentation). Dropping it before it resolves
// closes the file if the open completed meanwhile.
func OpenFile(path string, flag int, perm os.FileMode) core.Future[core.Result[*File]] {
	return &openFuture{path: path, flag: flag, perm: perm}
}

type openFuture struct {
	path  string
	flag  int
	perm  os.FileMode
	inner core.Future[core.Result[*File]]
}

func (o *openFuture) Poll(cx *core.Context) (core.Result[*File], bool) {
	if o.inner == nil {
		o.inner = o.start(cx)
	}
	r, ok := o.inner.Poll(cx)
	if ok {
		o.inner = nil
	}
	return r, ok
}

func (o *openFuture) start(cx *core.Context) core.Future[core.Result[*File]] {
	sp := spawnerOf(cx)
	if w := cx.Worker(); w != nil {
		if fio, ok := w.Driver().(core.FileIO); ok {
			return &driverOpen{f: &File{path: o.path, spawn: sp, fio: fio}, inner: fio.OpenFile(o.path, o.flag, uint32(o.perm)), flag: o.flag}
		}
	}
	path, flag, perm := o.path, o.flag, o.perm
	return newBlockingOp(sp, func() (*File, error) {
		f, err := os.OpenFile(path, flag, perm)
		if err != nil {
			return nil, err
		}
		return &File{path: path, spawn: sp, f: f}, nil
	}, func(f *File) { f.f.Close() })
}

func (o *openFuture) Drop() {
	if o.inner != nil {
		core.Drop(o.inner)
		o.inner = nil
	}
}

// driverOpen wraps a FileIO open.
type driverOpen struct {
	f     *File
	inner core.Future[core.Result[core.Handle]]
	flag  int
}

func (o *driverOpen) Poll(cx *core.Context) (core.Result[*File], bool) {
	r, ok := o.inner.Poll(cx)
	if !ok {
		return core.Result[*File]{}, false
	}
	o.inner = nil
	if r.Err != nil {
		return core.Result[*File]{Err: pathErr("open", o.f.path, r.Err)}, true
	}
	o.f.h = r.Value
	if o.flag&os.O_APPEND != 0 {
		// Appends go at the tracked position; start it at the end.
		if fi, err := os.Stat(o.f.path); err == nil {
			o.f.off = fi.Size()
		}
	}
	return core.Result[*File]{Value: o.f}, true
}

func (o *driverOpen) Drop() {
	if o.inner != nil {
		core.Drop(o.inner)
		o.inner = nil
	}
}

// pathErr wraps err in a *fs.PathError unless it is one already or io.EOF.
func pathErr(op, path string, err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// Name returns the path the file was opened with.
func (f *File) Name() string { return f.path }

func (f *File) closedErr(op string) error {
	return &fs.PathError{Op: op, Path: f.path, Err: os.ErrClosed}
}

// Read returns a future that reads up to len(p) bytes from the file
// position and advances it: (n > 0, nil), or (0, io.EOF) at the end of the
// file.
func (f *File) Read(p []byte) core.Future[core.Result[int]] {
	if f.closed.Load() {
		return ready(0, f.closedErr("read"))
	}
	if len(p) == 0 {
		return ready(0, nil)
	}
	if f.fio != nil {
		return &driverRW{f: f, p: p, inner: f.fio.ReadAt(f.h, p, f.off), op: "read", seq: true}
	}
	file := f.f
	return &copyOut{p: p, inner: newBlockingOp(f.spawn, func() ([]byte, error) {
		buf := make([]byte, len(p))
		n, err := file.Read(buf)
		return buf[:n], err
	}, nil)}
}

// ReadAt returns a future that reads len(p) bytes at offset off, without
// moving the file position. Like io.ReaderAt it resolves to (len(p), nil)
// or to (n < len(p), err), io.EOF at the end of the file.
func (f *File) ReadAt(p []byte, off int64) core.Future[core.Result[int]] {
	if f.closed.Load() {
		return ready(0, f.closedErr("read"))
	}
	if f.fio != nil {
		return &driverRW{f: f, p: p, at: atFull{fio: f.fio, h: f.h, p: p, off: off}, op: "read"}
	}
	file := f.f
	return &copyOut{p: p, inner: newBlockingOp(f.spawn, func() ([]byte, error) {
		buf := make([]byte, len(p))
		n, err := file.ReadAt(buf, off)
		return buf[:n], err
	}, nil)}
}

// Write returns a future that writes p at the file position (at the end
// for a file opened with os.O_APPEND) and advances it. It resolves to
// (len(p), nil) or to (n, err).
func (f *File) Write(p []byte) core.Future[core.Result[int]] {
	if f.closed.Load() {
		return ready(0, f.closedErr("write"))
	}
	if f.fio != nil {
		return &driverRW{f: f, p: p, at: atFull{fio: f.fio, h: f.h, p: p, off: f.off, write: true}, op: "write", seq: true}
	}
	file, data := f.f, clone(p)
	return newBlockingOp(f.spawn, func() (int, error) { return file.Write(data) }, nil)
}

// WriteAt returns a future that writes p at offset off without moving the
// file position. It resolves to (len(p), nil) or to (n, err).
func (f *File) WriteAt(p []byte, off int64) core.Future[core.Result[int]] {
	if f.closed.Load() {
		return ready(0, f.closedErr("write"))
	}
	if f.fio != nil {
		return &driverRW{f: f, p: p, at: atFull{fio: f.fio, h: f.h, p: p, off: off, write: true}, op: "write"}
	}
	file, data := f.f, clone(p)
	return newBlockingOp(f.spawn, func() (int, error) { return file.WriteAt(data, off) }, nil)
}

// Sync returns a future that commits the file's contents to stable storage
// (fsync).
func (f *File) Sync() core.Future[core.Result[core.Unit]] {
	if f.closed.Load() {
		return ready(core.Unit{}, f.closedErr("sync"))
	}
	if f.fio != nil {
		return &mapErr[core.Unit]{inner: f.fio.Fsync(f.h), op: "sync", path: f.path}
	}
	file := f.f
	return newBlockingOp(f.spawn, func() (core.Unit, error) { return core.Unit{}, file.Sync() }, nil)
}

// Stat returns a future of the file's fs.FileInfo.
func (f *File) Stat() core.Future[core.Result[fs.FileInfo]] {
	if f.closed.Load() {
		return ready[fs.FileInfo](nil, f.closedErr("stat"))
	}
	if f.fio != nil {
		path := f.path
		return newBlockingOp(f.spawn, func() (fs.FileInfo, error) { return os.Stat(path) }, nil)
	}
	file := f.f
	return newBlockingOp(f.spawn, file.Stat, nil)
}

// Close returns a future that closes the file. Later operations, and a
// second Close, fail with an error matching os.ErrClosed. Close does not
// wait for operations still running on the blocking pool: close the file
// after its operations resolved.
func (f *File) Close() core.Future[core.Result[core.Unit]] {
	if f.closed.Swap(true) {
		return ready(core.Unit{}, f.closedErr("close"))
	}
	if f.fio != nil {
		return &mapErr[core.Unit]{inner: f.fio.CloseFile(f.h), op: "close", path: f.path}
	}
	file := f.f
	return newBlockingOp(f.spawn, func() (core.Unit, error) { return core.Unit{}, file.Close() }, nil)
}

func clone(p []byte) []byte { return append([]byte(nil), p...) }

// copyOut copies the bytes a pool read returned into the caller's buffer
// when it resolves, so the pool never writes the caller's memory.
type copyOut struct {
	p     []byte
	inner *blockingOp[[]byte]
}

func (c *copyOut) Poll(cx *core.Context) (core.Result[int], bool) {
	r, ok := c.inner.Poll(cx)
	if !ok {
		return core.Result[int]{}, false
	}
	n := copy(c.p, r.Value)
	return core.Result[int]{Value: n, Err: r.Err}, true
}

func (c *copyOut) Drop() { c.inner.Drop() }

// driverRW wraps a FileIO read or write: errors become *fs.PathError, a
// sequential operation advances the position, and a read of nothing at the
// position is the end of the file.
type driverRW struct {
	f *File
	p []byte
	// inner is the driver's operation (a sequential read, which may be
	// short); when it is nil the operation is at, held by value so that a
	// whole-buffer read or write costs one allocation less.
	inner core.Future[core.Result[int]]
	at    atFull
	op    string
	seq   bool
}

func (d *driverRW) Poll(cx *core.Context) (core.Result[int], bool) {
	var r core.Result[int]
	var ok bool
	if d.inner != nil {
		r, ok = d.inner.Poll(cx)
	} else {
		r, ok = d.at.Poll(cx)
	}
	if !ok {
		return core.Result[int]{}, false
	}
	if d.seq {
		d.f.off += int64(r.Value)
		if d.op == "read" && r.Value == 0 && r.Err == nil && len(d.p) > 0 {
			r.Err = io.EOF
		}
	}
	r.Err = pathErr(d.op, d.f.path, r.Err)
	return r, true
}

func (d *driverRW) Drop() {
	if d.inner != nil {
		core.Drop(d.inner)
		return
	}
	d.at.Drop()
}

// mapErr wraps a driver operation's error in a *fs.PathError.
type mapErr[T any] struct {
	inner core.Future[core.Result[T]]
	op    string
	path  string
}

func (m *mapErr[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	r, ok := m.inner.Poll(cx)
	if ok {
		r.Err = pathErr(m.op, m.path, r.Err)
	}
	return r, ok
}

func (m *mapErr[T]) Drop() { core.Drop(m.inner) }

// readyFuture is ready at once.
type readyFuture[T any] struct{ r core.Result[T] }

func (f readyFuture[T]) Poll(*core.Context) (core.Result[T], bool) { return f.r, true }

func ready[T any](v T, err error) core.Future[core.Result[T]] {
	return readyFuture[T]{core.Result[T]{Value: v, Err: err}}
}
