package co_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wsync"
)

// settle lets every other task run until it waits: on this package's
// one-queue scheduler a yield is woken only once the queue is empty.
func settle(c *co.Ctx) {
	for range 3 {
		c.Yield()
	}
}

// untilHeld yields until someone holds mu.
func untilHeld(c *co.Ctx, mu *wsync.Mutex) {
	for mu.TryLock() {
		mu.Unlock()
		c.Yield()
	}
}

// expectWritten reads the far end of a duplex in a task of its own while
// the writers finish, then ends the stream and checks that it carried
// want.
func expectWritten(c *co.Ctx, near, far *wio.DuplexStream, want string, writers ...*core.JoinHandle[error]) error {
	reader := co.Go(c, func(c *co.Ctx) error {
		got, err := io.ReadAll(co.Reader(c, far))
		if err == nil && string(got) != want {
			err = fmt.Errorf("the stream carried %q, want %q", got, want)
		}
		return err
	})
	for _, h := range writers {
		if err := errors.Join(co.AwaitResult(c, h)); err != nil {
			return err
		}
	}
	if err := near.CloseWrite(); err != nil {
		return err
	}
	return errors.Join(co.AwaitResult(c, reader))
}

// slowSink is a Stream whose writes each wait once (waking their task at
// once, so it goes to the back of the queue) and then take at most 10
// bytes: writers that did not take turns would interleave. It has a write
// lock, as weft's streams have; its reads end at once.
type slowSink struct {
	mu  sync.Mutex
	got []byte
	wl  wsync.Mutex
}

func (s *slowSink) Read([]byte) core.Future[core.Result[int]] { return wio.Ready(0, io.EOF) }
func (s *slowSink) Write(p []byte) core.Future[core.Result[int]] {
	return &slowWrite{s: s, p: p}
}
func (s *slowSink) Close() error            { return nil }
func (s *slowSink) WriteLock() *wsync.Mutex { return &s.wl }

func (s *slowSink) written() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

type slowWrite struct {
	s      *slowSink
	p      []byte
	waited bool
}

func (w *slowWrite) Poll(cx *core.Context) (core.Result[int], bool) {
	if !w.waited {
		w.waited = true
		cx.Waker().Wake()
		return core.Result[int]{}, false
	}
	n := min(len(w.p), 10)
	w.s.mu.Lock()
	w.s.got = append(w.s.got, w.p[:n]...)
	w.s.mu.Unlock()
	return core.Result[int]{Value: n}, true
}

func TestConnWritesFromSeveralTasksOnOneStreamArriveWhole(t *testing.T) {
	r := newRuntime(t)
	s := &slowSink{}
	const writers, messages, size = 3, 4, 100
	failed, err := run(t, r, func(c *co.Ctx) error {
		var hs []*core.JoinHandle[error]
		for w := range writers {
			hs = append(hs, co.Go(c, func(c *co.Ctx) error {
				conn := co.Conn(c, s)
				for range messages {
					if _, err := conn.Write(bytes.Repeat([]byte{byte('a' + w)}, size)); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		for _, h := range hs {
			if err := errors.Join(co.AwaitResult(c, h)); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, errors.Join(err, failed))
	got := s.written()
	require.Len(t, got, writers*messages*size)
	for i := 0; i < len(got); i += size {
		m := got[i : i+size]
		require.Equal(t, string(bytes.Repeat(m[:1], size)), string(m), "message %d: two Writes were interleaved", i/size)
	}
}

func TestConnReadsFromSeveralTasksOnOneStreamGetEachByteOnce(t *testing.T) {
	r := newRuntime(t)
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i)
	}
	var got [][]byte
	failed, err := run(t, r, func(c *co.Ctx) error {
		a, b := wio.Duplex(7)
		chunks := make([][]byte, 3)
		var hs []*core.JoinHandle[error]
		for i := range chunks {
			hs = append(hs, co.Go(c, func(c *co.Ctx) error {
				conn := co.Conn(c, b)
				buf := make([]byte, 5+i)
				for {
					n, err := conn.Read(buf)
					chunks[i] = append(chunks[i], buf[:n]...)
					if err != nil {
						return err
					}
				}
			}))
		}
		settle(c) // every reader waits before the first byte is written
		if _, err := co.Conn(c, a).Write(data); err != nil {
			return err
		}
		if err := a.CloseWrite(); err != nil {
			return err
		}
		for i, h := range hs {
			err, jerr := co.AwaitResult(c, h)
			if jerr != nil || err != io.EOF {
				return fmt.Errorf("reader %d ended with %v, %v; want io.EOF", i, err, jerr)
			}
		}
		got = chunks
		return nil
	})
	require.NoError(t, errors.Join(err, failed))
	all := slices.Concat(got...)
	require.Len(t, all, len(data), "each byte to exactly one reader")
	slices.Sort(all)
	want := slices.Clone(data)
	slices.Sort(want)
	assert.Equal(t, want, all)
}

func TestAConnWriteWaitingForItsTurnTimesOutHavingWrittenNothing(t *testing.T) {
	r := newRuntime(t)
	failed, err := run(t, r, func(c *co.Ctx) error {
		a, b := wio.Duplex(16)
		first := bytes.Repeat([]byte("A"), 100)
		ha := co.Go(c, func(c *co.Ctx) error {
			_, err := co.Conn(c, a).Write(first)
			return err
		})
		untilHeld(c, a.WriteLock()) // A holds the turn, waiting for room
		var waiting atomic.Pointer[co.StreamConn]
		hb := co.Go(c, func(c *co.Ctx) error {
			conn := co.Conn(c, a)
			waiting.Store(conn)
			n, err := conn.Write([]byte("late"))
			var ne net.Error
			if n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				return fmt.Errorf("a Write that timed out waiting for its turn returned %d, %v", n, err)
			}
			// The turn was not taken: a Write without a deadline waits
			// for A and then goes out whole.
			_ = conn.SetWriteDeadline(time.Time{})
			_, err = conn.Write([]byte("BBBB"))
			return err
		})
		settle(c) // B waits for the turn
		if waiting.Load() == nil {
			return errors.New("B did not start")
		}
		_ = waiting.Load().SetWriteDeadline(time.Now().Add(-time.Second))
		settle(c) // B times out and waits again
		return expectWritten(c, a, b, string(first)+"BBBB", ha, hb)
	})
	require.NoError(t, errors.Join(err, failed))
}

func TestAbortingATaskMidWriteGivesTheTurnToTheNextWriter(t *testing.T) {
	r := newRuntime(t)
	failed, err := run(t, r, func(c *co.Ctx) error {
		a, b := wio.Duplex(16)
		ha := co.Go(c, func(c *co.Ctx) error {
			_, err := co.Conn(c, a).Write(bytes.Repeat([]byte("A"), 100))
			return err
		})
		untilHeld(c, a.WriteLock()) // A wrote 16 bytes and waits for room
		// B is a Writer, not a Conn: both take the stream's turns.
		hb := co.Go(c, func(c *co.Ctx) error {
			_, err := co.Writer(c, a).Write([]byte("BBBB"))
			return err
		})
		settle(c) // B waits for the turn
		ha.Abort()
		if _, err := co.AwaitResult(c, ha); !core.IsCancelled(err) {
			return fmt.Errorf("the aborted writer ended with %v", err)
		}
		// What A wrote before it was aborted, then B's Write whole.
		return expectWritten(c, a, b, strings.Repeat("A", 16)+"BBBB", hb)
	})
	require.NoError(t, errors.Join(err, failed))
}
