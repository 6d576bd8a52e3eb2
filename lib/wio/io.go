package wio

import (
	"github.com/weftrt/weft/core"
)

// Reader is a source of bytes whose reads are futures.
type Reader interface {
	// Read returns a future that reads up to len(p) bytes into p. It
	// resolves to (n > 0, nil), to (0, io.EOF) at the end of the stream,
	// or to (n, err); a Read of an empty p resolves to (0, nil). The
	// reader may write p until the future resolves or its Drop returns.
	Read(p []byte) core.Future[core.Result[int]]
}

// Writer is a sink of bytes whose writes are futures.
type Writer interface {
	// Write returns a future that writes a prefix of p. It resolves once
	// at least one byte is written, to (n, nil) with 1 <= n <= len(p), or
	// to (n, err); a Write of an empty p resolves to (0, nil). The writer
	// may read p until the future resolves or its Drop returns.
	Write(p []byte) core.Future[core.Result[int]]
}

// ReadWriter is a Reader and a Writer. The built-in streams allow a Read
// and a Write (and more) in flight at once.
type ReadWriter interface {
	Reader
	Writer
}

// CloseWriter is implemented by streams that can shut down their write
// side while reads go on (a TCP half close). The peer then reads io.EOF.
type CloseWriter interface {
	CloseWrite() error
}

// Flusher is implemented by writers that buffer (BufWriter). Flush
// resolves when everything written so far has been handed on.
type Flusher interface {
	Flush() core.Future[core.Result[core.Unit]]
}

// PollReader is an optional interface of a Reader: reading by polling,
// without a future per read (Tokio's AsyncRead), for code that drives one
// reader by hand.
//
// Only one poll-style read is in progress at a time, by one caller: its
// state lives in the reader. Futures from Read are independent of it. A
// caller that may share the reader with others (another task, another
// Copy) uses an [Op] of its own instead, which gives the same
// allocation-free loop over a reader whose futures are [Rearmer]s: Copy,
// CopyBidirectional and package weft/lib/co do.
type PollReader interface {
	Reader
	// PollRead reads into p like Read's future: (n, err, true) when done,
	// (0, nil, false) after arranging for cx's waker to be woken. Until it
	// reports done, call it again with the same p.
	PollRead(cx *core.Context, p []byte) (int, error, bool)
	// CancelRead abandons a PollRead that reported pending: its waker is
	// not woken on its behalf afterwards. It does nothing otherwise.
	CancelRead()
}

// PollWriter is the writing twin of PollReader (Tokio's AsyncWrite), with
// the same rule: one caller at a time; [Op] is the form for many.
type PollWriter interface {
	Writer
	// PollWrite writes a prefix of p like Write's future. Until it reports
	// done, call it again with the same p.
	PollWrite(cx *core.Context, p []byte) (int, error, bool)
	// CancelWrite abandons a PollWrite that reported pending.
	CancelWrite()
}

// ready is a future that is ready with a result.
type ready[T any] struct{ r core.Result[T] }

func (f ready[T]) Poll(*core.Context) (core.Result[T], bool) { return f.r, true }

// Ready returns a future that resolves at once to (v, err). Readers and
// writers that complete without waiting use it.
func Ready[T any](v T, err error) core.Future[core.Result[T]] {
	return ready[T]{core.Result[T]{Value: v, Err: err}}
}
