// Package wfs is weft's file I/O: open, create, read, write, positional
// reads and writes, sync, stat and close as futures, plus ReadFile,
// WriteFile, Stat and Remove.
//
// # Where the work happens
//
// A file's operations go where the runtime can do them without blocking a
// worker, decided when the file is opened (from the Context of the task
// that first polls Open):
//
//   - through the driver, when it implements [core.FileIO] (io_uring
//     submits file reads and writes like socket operations);
//   - otherwise on the runtime's blocking pool, reached through the
//     worker's optional [core.BlockingWorker] interface. A readiness driver
//     such as epoll has no FileIO: regular files are always "ready", so
//     epoll cannot make their reads asynchronous, and the pool is the
//     honest place for them (Tokio does the same);
//   - failing both (a worker without the interface, or a future polled
//     outside any runtime), on a goroutine of its own.
//
// # Buffers and cancellation
//
// On the blocking pool an operation runs on another goroutine, and a Go
// system call cannot be interrupted. So that dropping a pending operation
// is always safe, pool reads go into a private buffer copied into p when
// the future resolves, and pool writes copy p when the operation is
// created: p is never touched after the future resolves or is dropped.
// Dropping does not undo the work: the system call runs to completion and
// its result is discarded (a file opened by a dropped Open is closed, so no
// descriptor leaks), and a dropped sequential Read or Write still moves the
// file position.
//
// # Concurrency
//
// ReadAt, WriteAt, Sync and Stat may be pending at once, from any tasks.
// Read and Write use the file position: issue one at a time.
//
// # Errors
//
// Errors are those of package os (*fs.PathError wrapping syscall.Errno
// values, io.EOF at the end of a file, os.ErrClosed after Close), so
// errors.Is works as with os.File.
package wfs
