package blocking_test

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/blocking"
)

// Every test shuts its pools down, so no goroutine may outlive the package's
// tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// await polls h from the calling goroutine until it resolves, sleeping on a
// channel that the handle's waker signals between polls.
func await[T any](h *core.JoinHandle[T]) core.Result[T] {
	woken := make(chan struct{}, 1)
	cx := core.NewContext(core.WakerFunc(func() {
		select {
		case woken <- struct{}{}:
		default:
		}
	}))
	for {
		if r, ok := h.Poll(cx); ok {
			return r
		}
		<-woken
	}
}

// eventually polls cond until it holds. The bound only turns a hang into a
// failure; how long the wait takes never changes the outcome of a test.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// newPool returns a pool that is shut down, waiting for its jobs, when the
// test ends.
func newPool(t *testing.T, cfg blocking.Config) *blocking.Pool {
	t.Helper()
	p := blocking.New(cfg)
	t.Cleanup(func() { p.Shutdown(-1) })
	return p
}

// gate holds jobs until it is opened. It opens itself when the test ends,
// before the pool's cleanup waits for the jobs, so a failing test does not
// hang.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate(t *testing.T) *gate {
	g := &gate{ch: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// job returns a function that reports on started, waits for the gate and
// returns v.
func (g *gate) job(started chan<- struct{}, v int) func() int {
	return func() int {
		started <- struct{}{}
		<-g.ch
		return v
	}
}
