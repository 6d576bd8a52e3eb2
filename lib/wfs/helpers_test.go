package wfs_test

import (
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// await polls f until it is ready, sleeping on a channel its waker
// signals; the limit only turns a lost wake into a failure.
func await[T any](t testing.TB, cx func(core.Waker) *core.Context, f core.Future[T]) T {
	t.Helper()
	woken := make(chan struct{}, 1)
	c := cx(core.WakerFunc(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}))
	limit := time.After(time.Minute)
	for {
		if v, ok := f.Poll(c); ok {
			return v
		}
		select {
		case <-woken:
		case <-limit:
			t.Fatal("future not ready within a minute: a wake was lost")
		}
	}
}

// noRuntime is the Context of a future polled outside any runtime.
func noRuntime(w core.Waker) *core.Context { return core.NewContext(w) }

// worker is a core.Worker with a driver and, optionally, a blocking pool.
type worker struct {
	driver core.Driver
	pool   core.BlockingSpawner
}

func (w *worker) Scheduler() core.Scheduler { return nil }
func (w *worker) Defer(x core.Waker)        { x.Wake() }
func (w *worker) Driver() core.Driver       { return w.driver }
func (w *worker) Time() *core.Time          { return nil }

// poolWorker adds core.BlockingWorker.
type poolWorker struct{ worker }

func (w *poolWorker) Blocking() core.BlockingSpawner { return w.pool }

// on returns a Context factory for futures polled by worker w.
func on(w core.Worker) func(core.Waker) *core.Context {
	return func(wk core.Waker) *core.Context {
		base := spi.NewWorkerContext(w).Context()
		c := base.WithWaker(wk)
		return &c
	}
}

// heldPool is a blocking pool that runs jobs only when released, and
// counts them.
type heldPool struct {
	mu   sync.Mutex
	jobs []func()
	n    int
	auto bool
}

func (p *heldPool) SpawnBlockingFunc(f func()) error {
	p.mu.Lock()
	p.n++
	if p.auto {
		p.mu.Unlock()
		go f()
		return nil
	}
	p.jobs = append(p.jobs, f)
	p.mu.Unlock()
	return nil
}

// release runs the held jobs, on this goroutine.
func (p *heldPool) release() {
	p.mu.Lock()
	jobs := p.jobs
	p.jobs = nil
	p.mu.Unlock()
	for _, f := range jobs {
		f()
	}
}

func (p *heldPool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// memDriver is a core.FileIO "driver" over real files, completing every
// operation at once; the rest of core.Driver is not implemented.
type memDriver struct {
	core.Driver
	mu    sync.Mutex
	files map[core.Handle]*os.File
	next  core.Handle
	ops   int
}

func newMemDriver() *memDriver { return &memDriver{files: map[core.Handle]*os.File{}} }

func readyR[T any](v T, err error) core.Future[core.Result[T]] {
	return core.PollFunc[core.Result[T]](func(*core.Context) (core.Result[T], bool) {
		return core.Result[T]{Value: v, Err: err}, true
	})
}

func (d *memDriver) file(h core.Handle) *os.File {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ops++
	return d.files[h]
}

func (d *memDriver) OpenFile(path string, flag int, perm uint32) core.Future[core.Result[core.Handle]] {
	f, err := os.OpenFile(path, flag, os.FileMode(perm))
	if err != nil {
		return readyR[core.Handle](0, err)
	}
	d.mu.Lock()
	d.next++
	h := d.next
	d.files[h] = f
	d.ops++
	d.mu.Unlock()
	return readyR(h, nil)
}

// ReadAt returns at most 3 bytes per call, to exercise short reads.
func (d *memDriver) ReadAt(h core.Handle, p []byte, off int64) core.Future[core.Result[int]] {
	n, err := d.file(h).ReadAt(p[:min(len(p), 3)], off)
	if err == io.EOF && n > 0 {
		err = nil
	}
	return readyR(n, err)
}

func (d *memDriver) WriteAt(h core.Handle, p []byte, off int64) core.Future[core.Result[int]] {
	n, err := d.file(h).WriteAt(p[:min(len(p), 3)], off)
	return readyR(n, err)
}

func (d *memDriver) Fsync(h core.Handle) core.Future[core.Result[core.Unit]] {
	return readyR(core.Unit{}, d.file(h).Sync())
}

func (d *memDriver) CloseFile(h core.Handle) core.Future[core.Result[core.Unit]] {
	f := d.file(h)
	d.mu.Lock()
	delete(d.files, h)
	d.mu.Unlock()
	return readyR(core.Unit{}, f.Close())
}

func (d *memDriver) open() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.files)
}
