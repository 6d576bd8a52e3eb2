package co

import (
	"errors"
	"iter"

	"github.com/weftrt/weft/lib/wsync/broadcast"
	"github.com/weftrt/weft/lib/wsync/mpsc"
	"github.com/weftrt/weft/lib/wsync/watch"
)

// Range returns the messages of an mpsc receiver (bounded or unbounded),
// in order, for a range loop in the body:
//
//	for v := range co.Range(c, rx) { ... }
//
// The loop ends once the channel is closed and drained. Each iteration
// awaits rx.Recv(), so the body suspends between messages. No message is
// lost: a message the receive took is handed to the loop body, and
// breaking out of the loop leaves every later message in the channel (no
// receive is pending while the loop body runs). If the task is aborted
// while the loop waits, the pending receive is dropped, taking nothing,
// and the body unwinds. The sequence belongs to the body of c; iterate it
// there only.
func Range[T any](c *Ctx, rx *mpsc.Receiver[T]) iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			res := Await(c, rx.Recv())
			if res.Err != nil || !yield(res.Value) {
				return
			}
		}
	}
}

// RangeBroadcast returns the messages of a broadcast receiver, in order,
// with the error of each receive, for a range loop in the body:
//
//	for v, err := range co.RangeBroadcast(c, rx) { ... }
//
// err is nil for a message, or a broadcast.LaggedError (with the zero
// value) when the receiver fell behind and messages were overwritten
// before it read them; the loop goes on after a lag with the oldest
// message still held. The loop ends when the channel is closed and the
// receiver has read everything, or the receiver is closed. Breaking out
// loses nothing: the next receive reads the next message. Abort behaves
// as in [Range].
func RangeBroadcast[T any](c *Ctx, rx *broadcast.Receiver[T]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		for {
			res := Await(c, rx.Recv())
			if errors.Is(res.Err, broadcast.ErrClosed) || !yield(res.Value, res.Err) {
				return
			}
		}
	}
}

// RangeWatch returns the values of a watch receiver as they change, for a
// range loop in the body:
//
//	for v := range co.RangeWatch(c, rx) { ... }
//
// Each iteration waits for a value rx has not seen (at once if there is
// one), marks the newest value seen and yields it; values sent in quick
// succession may be seen only as the last of them, as with any watch. The
// loop ends when the sender is closed and its last value seen, or the
// receiver is closed. Breaking out leaves the next change unseen.
func RangeWatch[T any](c *Ctx, rx *watch.Receiver[T]) iter.Seq[T] {
	return func(yield func(T) bool) {
		for {
			if err := Await(c, rx.Changed()); err != nil {
				return
			}
			if !yield(rx.BorrowAndUpdate()) {
				return
			}
		}
	}
}
