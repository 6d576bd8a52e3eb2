package wio_test

import (
	"sync"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
)

// await polls f from the calling goroutine until it is ready, sleeping on
// a channel its waker signals. The limit only turns a lost wake into a
// failure; it never decides a verdict.
func await[T any](t testing.TB, f core.Future[T]) T {
	t.Helper()
	v, ok := awaitOrGiveUp(f)
	if !ok {
		t.Fatal("future not ready within a minute: a wake was lost")
	}
	return v
}

// awaitOrGiveUp is await without the test: it reports false on a hang.
func awaitOrGiveUp[T any](f core.Future[T]) (T, bool) {
	woken := make(chan struct{}, 1)
	cx := core.NewContext(core.WakerFunc(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}))
	limit := time.After(time.Minute)
	for {
		if v, ok := f.Poll(cx); ok {
			return v, true
		}
		select {
		case <-woken:
		case <-limit:
			var zero T
			return zero, false
		}
	}
}

// awaitAll polls every future on a goroutine of its own and returns their
// results in order.
func awaitAll[T any](t testing.TB, fs ...core.Future[T]) []T {
	t.Helper()
	out := make([]T, len(fs))
	var wg sync.WaitGroup
	for i, f := range fs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ok bool
			if out[i], ok = awaitOrGiveUp(f); !ok {
				t.Errorf("future %d not ready within a minute: a wake was lost", i)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return out
}

// pollOnce polls f once with waker w.
func pollOnce[T any](f core.Future[T], w core.Waker) (T, bool) {
	return f.Poll(core.NewContext(w))
}

// counter is a waker that counts its wakes.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) Wake() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// script is a Reader and Writer whose operations complete at once: reads
// return the chunks of reads in turn (then io.EOF), writes accept at most
// maxWrite bytes each. It counts its operations.
type script struct {
	reads    [][]byte
	maxWrite int
	written  []byte
	nreads   int
	nwrites  int
	writeErr error
}

func (s *script) Read(p []byte) core.Future[core.Result[int]] {
	s.nreads++
	if len(p) == 0 {
		return wio.Ready(0, nil)
	}
	if len(s.reads) == 0 {
		return wio.Ready(0, eof)
	}
	n := copy(p, s.reads[0])
	if s.reads[0] = s.reads[0][n:]; len(s.reads[0]) == 0 {
		s.reads = s.reads[1:]
	}
	return wio.Ready(n, nil)
}

func (s *script) Write(p []byte) core.Future[core.Result[int]] {
	s.nwrites++
	if s.writeErr != nil {
		return wio.Ready(0, s.writeErr)
	}
	n := len(p)
	if s.maxWrite > 0 {
		n = min(n, s.maxWrite)
	}
	s.written = append(s.written, p[:n]...)
	return wio.Ready(n, nil)
}
