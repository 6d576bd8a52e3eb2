package co_test

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
)

// stoppedWrite is a write that waits until it is cancelled (as a
// wio.Canceller) and then resolves to what it "wrote" before the cancel
// reached it: the situation of a write on a completion driver.
type stoppedWrite struct {
	mu        sync.Mutex
	cancelled bool
	dropped   bool
	waker     core.Waker
	res       core.Result[int]
}

func (w *stoppedWrite) Poll(cx *core.Context) (core.Result[int], bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancelled {
		return w.res, true
	}
	w.waker = cx.Waker()
	return core.Result[int]{}, false
}

func (w *stoppedWrite) Cancel() bool {
	w.mu.Lock()
	w.cancelled = true
	wk := w.waker
	w.mu.Unlock()
	if wk != nil {
		wk.Wake()
	}
	return true
}

func (w *stoppedWrite) Drop() {
	w.mu.Lock()
	w.dropped = true
	w.mu.Unlock()
}

// stopStream is a co.Stream whose writes are stoppedWrites.
type stopStream struct {
	res    core.Result[int]
	writes []*stoppedWrite
}

func (s *stopStream) Read([]byte) core.Future[core.Result[int]] {
	panic("not read")
}

func (s *stopStream) Write([]byte) core.Future[core.Result[int]] {
	w := &stoppedWrite{res: s.res}
	s.writes = append(s.writes, w)
	return w
}

func (s *stopStream) Close() error { return nil }

func (s *stopStream) dropped() bool {
	for _, w := range s.writes {
		if w.dropped {
			return true
		}
	}
	return false
}

// A write that a deadline stops after it wrote part of its buffer reports
// that part with the timeout; one stopped before it wrote anything
// reports nothing.
func TestAWriteStoppedByItsDeadlineReportsWhatItWrote(t *testing.T) {
	cancelled := core.Result[int]{Err: &os.SyscallError{Syscall: "write", Err: syscall.ECANCELED}}
	for _, tc := range []struct {
		name string
		res  core.Result[int]
		want int
	}{
		{"wrote3", core.Result[int]{Value: 3}, 3},
		{"wroteNothing", cancelled, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRuntime(t)
			s := &stopStream{res: tc.res}
			failure, err := run(t, r, func(c *co.Ctx) error {
				conn := co.Conn(c, s)
				setter := co.Go(c, func(c *co.Ctx) int {
					for range 5 {
						c.Yield() // let the writer wait
					}
					_ = conn.SetWriteDeadline(time.Now().Add(-time.Second))
					return 0
				})
				n, err := conn.Write(make([]byte, 10))
				co.Await(c, setter)
				if n != tc.want || !errors.Is(err, os.ErrDeadlineExceeded) {
					return fmt.Errorf("the stopped write returned (%d, %v); want (%d, a timeout)", n, err, tc.want)
				}
				if s.dropped() {
					return errors.New("the write was dropped, not stopped")
				}
				return nil
			})
			require.NoError(t, err)
			require.NoError(t, failure)
		})
	}
}
