// Package wio is weft's I/O vocabulary for poll-based code: readers and
// writers whose operations are futures, and the utilities built on them
// (ReadFull, WriteAll, ReadAll, Copy, CopyBidirectional, Split, BufReader,
// BufWriter, Timeout) plus an in-memory duplex pipe for tests.
//
// # Operations are futures
//
// A [Reader]'s Read(p) returns a future of the number of bytes read; a
// [Writer]'s Write(p) a future of the number written. This is the shape of
// weft's Driver SPI, so a socket's Read is the driver's operation with
// nothing in between, and it works for readiness drivers (epoll) and
// completion drivers (io_uring) alike. It also settles two questions that
// a poll_read-style interface leaves open:
//
//   - Concurrency. The waiter for readiness lives in the operation's
//     future, not in the stream, so any number of reads and writes may be
//     in flight on one stream (Tokio's reactor-refactor design). Two tasks
//     can share a socket, one reading and one writing, without a lock;
//     that is why [Split] is a pair of views and not a lock. Several
//     readers of one stream each get bytes of their own; a poll-style
//     loop keeps its operation in an [Op] of its own rather than in the
//     stream, so that holds for Copy too. Concurrent writers' short
//     writes may interleave; writers that must not interleave take turns
//     with a [WriteLocker].
//   - Cancellation. Abandoning an operation is [core.Drop] on its future:
//     its waiter is removed and its task is not woken on its behalf. Every
//     future of this package forwards Drop to the operation it is waiting
//     on, so a [Timeout] or a select that gives up on a ReadFull leaves
//     nothing behind. A write on a completion driver may have sent bytes
//     when it is abandoned; its future is a [Canceller], which [Timeout]
//     and [Op.Stop] cancel and poll on, so a deadline learns how many.
//
// # Results
//
// A Read resolves to (n > 0, nil), to (0, io.EOF) at the end of the
// stream, or to (n, err). A Read of an empty p resolves to (0, nil) at
// once; zero bytes mean the end of the stream only when p was not empty
// (the seeds' pitfall). A Write resolves once at least one byte was
// written: (n, nil) with 1 <= n <= len(p), or (n, err). A short write is
// not an error; [WriteAll] writes everything. Errors are Go's values:
// io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, syscall.Errno, matched with
// errors.Is.
//
// The buffer passed to Read or Write belongs to the operation until its
// future resolves or is dropped; do not touch it meanwhile.
//
// # Budget
//
// Operations consume the task's cooperative budget (each poll of a
// driver's operation takes a unit), so a Copy between two streams that are
// always ready still yields to other tasks.
package wio
