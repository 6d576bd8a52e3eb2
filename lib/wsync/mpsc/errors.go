package mpsc

import "errors"

// ErrClosed means the channel is closed: for a send, the receiver closed it
// (or the sender handle used was closed); for a receive, every sender is
// gone (or the receiver closed it) and every buffered message was received.
var ErrClosed = errors.New("weft/mpsc: channel closed")

// ErrFull is returned by TrySend and TryReserve when a bounded channel has
// no capacity left (or other sends are queued for it).
var ErrFull = errors.New("weft/mpsc: channel full")

// ErrEmpty is returned by TryRecv when no message is buffered but the
// channel is not closed.
var ErrEmpty = errors.New("weft/mpsc: channel empty")
