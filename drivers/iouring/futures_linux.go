//go:build linux

package iouring

import (
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// newOp returns an op of kind on h's record; a stale handle makes the
// future fail at its first poll with err.
func (d *Driver) newOp(h core.Handle, kind opKind) (*op, error) {
	rec, err := d.lookup(h)
	if err != nil {
		return nil, err
	}
	return &op{d: d, home: d, rec: rec, kind: kind}, nil
}

// intFuture is the future of the operations that resolve to a byte count.
type intFuture struct {
	o   *op
	err error // failed before it started (stale handle, bad address)
}

// opFuture is an intFuture with its op, allocated together: one
// allocation per read or write instead of two. The op is referenced by
// address (the ring's table, the record's list), which keeps the whole
// block reachable as long as either part is.
type opFuture struct {
	intFuture
	op op
}

func (d *Driver) intOp(h core.Handle, kind opKind, p []byte, bufs [][]byte) *intFuture {
	rec, err := d.lookup(h)
	if err != nil {
		return &intFuture{err: err}
	}
	b := &opFuture{op: op{d: d, home: d, rec: rec, kind: kind}}
	o := &b.op
	b.o = o
	f := &b.intFuture
	if o.rec.kind == kindFile {
		switch kind {
		case kRecv:
			o.kind, o.off = kReadFile, -1 // at the file position
		case kSend:
			o.kind, o.off = kWriteFile, -1
		}
	}
	o.p = p
	if bufs != nil {
		o.setBufs(bufs)
	}
	return f
}

// Poll implements core.Future.
func (f *intFuture) Poll(cx *core.Context) (core.Result[int], bool) {
	if f.err != nil {
		return core.Result[int]{Err: f.err}, true
	}
	o := f.o
	if !o.started && f.empty() {
		o.started, o.taken = true, true
		return core.Result[int]{}, true
	}
	res, err, ok := o.poll(cx)
	if !ok {
		return core.Result[int]{}, false
	}
	if err != nil {
		return core.Result[int]{Err: err}, true
	}
	if res < 0 {
		return core.Result[int]{Err: syscallErr(kindNames[o.kind], res)}, true
	}
	if res == 0 && o.rec.kind == kindStream && (o.kind == kRecv || o.kind == kReadv) && !f.empty() {
		return core.Result[int]{Err: io.EOF}, true
	}
	return core.Result[int]{Value: int(res)}, true
}

// empty reports a transfer of no bytes on a stream or file, which
// resolves at once without a request (a datagram's empty message is a
// message, and is sent).
func (f *intFuture) empty() bool {
	o := f.o
	if o.rec.kind == kindDatagram && o.kind != kRecv && o.kind != kReadv {
		return false
	}
	switch o.kind {
	case kRecv, kSend, kReadFile, kWriteFile:
		return len(o.p) == 0
	case kReadv, kWritev:
		return len(o.x.iov) == 0
	}
	return false
}

// Drop cancels the operation if the kernel holds it. A stream read is
// settled: Drop returns once the kernel is done with its buffer, and the
// bytes (or the failure) a completion that beat the cancel brought are
// kept for the next read on the handle. Other operations are abandoned:
// their buffer stays reachable until the kernel's completion, whose
// result is discarded (a write's bytes may have gone out; see Cancel).
func (f *intFuture) Drop() {
	if f.o != nil {
		f.o.drop()
	}
}

// Cancel implements weft/lib/wio.Canceller for the writes (Write,
// Writev, WriteAt, SendTo): a write the kernel holds is cancelled, and
// the future, polled on, resolves to what the kernel did before the
// cancel reached it: the bytes written, or an error matching
// syscall.ECANCELED if it wrote nothing. A completion driver cannot take
// back bytes the kernel sent, so this is how a deadline on a write learns
// how many were; Drop instead leaves the write to finish or stop unseen.
// For every other operation Cancel reports false: a dropped read keeps
// what it received for the next read (see Drop), and the other
// operations clean up after themselves.
func (f *intFuture) Cancel() bool {
	if f.err != nil || f.o == nil {
		return false
	}
	switch f.o.kind {
	case kSend, kWritev, kWriteFile, kSendTo:
		return f.o.stop()
	}
	return false
}

// Rearm readies a resolved Read or Write for another transfer on p, so a
// stream's poll-style loop reuses one future and one op record (package
// weft/lib/wnet uses it). It reports false, changing nothing, while the
// future is pending, after an error, or for another kind of operation.
func (f *intFuture) Rearm(p []byte) bool {
	if f.err != nil || f.o == nil {
		return false
	}
	switch f.o.kind {
	case kRecv, kSend, kReadFile, kWriteFile:
	default:
		return false
	}
	if f.o.kind == kReadFile || f.o.kind == kWriteFile {
		if f.o.off != -1 {
			return false
		}
	}
	return f.o.rearm(p)
}

// Read receives into p: recv(2) on a socket, read(2) at the file position
// on a file. The kernel writes p until the future resolves or its Drop
// returns; on a file or a datagram socket, after a Drop, until the
// cancelled request's completion arrives (the driver keeps p reachable
// until then). Bytes that dropped reads of a stream received come first.
func (d *Driver) Read(h core.Handle, p []byte) core.Future[core.Result[int]] {
	return d.intOp(h, kRecv, p, nil)
}

// Write sends p (send(2) with MSG_NOSIGNAL on a socket); it may write
// fewer than len(p) bytes.
func (d *Driver) Write(h core.Handle, p []byte) core.Future[core.Result[int]] {
	return d.intOp(h, kSend, p, nil)
}

// Readv reads into bufs in order (recvmsg on a socket, readv on a file).
func (d *Driver) Readv(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	return d.intOp(h, kReadv, nil, nonNil(bufs))
}

// Writev writes bufs in order (sendmsg with MSG_NOSIGNAL on a socket,
// writev on a file); it may write fewer bytes than they hold.
func (d *Driver) Writev(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	return d.intOp(h, kWritev, nil, nonNil(bufs))
}

func nonNil(bufs [][]byte) [][]byte {
	if bufs == nil {
		return [][]byte{}
	}
	return bufs
}

// SendTo sends p as one datagram to the address to (sendmsg).
func (d *Driver) SendTo(h core.Handle, p []byte, to string) core.Future[core.Result[int]] {
	f := d.intOp(h, kSendTo, nil, [][]byte{p})
	if f.err == nil {
		var sa unix.Sockaddr
		if _, sa, f.err = sockets.Resolve(f.o.rec.network, to, false); f.err == nil {
			f.o.x.salen, f.err = sockets.PutRaw(sa, &f.o.x.sa)
		}
	}
	return f
}

// ReadAt reads into p at offset off of a file (IORING_OP_READ).
func (d *Driver) ReadAt(h core.Handle, p []byte, off int64) core.Future[core.Result[int]] {
	f := d.intOp(h, kReadFile, p, nil)
	if f.o != nil {
		f.o.off = off
	}
	return f
}

// WriteAt writes p at offset off of a file (IORING_OP_WRITE); it may
// write fewer bytes.
func (d *Driver) WriteAt(h core.Handle, p []byte, off int64) core.Future[core.Result[int]] {
	f := d.intOp(h, kWriteFile, p, nil)
	if f.o != nil {
		f.o.off = off
	}
	return f
}

// datagramFuture is the future of RecvFrom.
type datagramFuture struct{ intFuture }

// RecvFrom receives one datagram into p (recvmsg); a longer one is
// truncated, its rest discarded.
func (d *Driver) RecvFrom(h core.Handle, p []byte) core.Future[core.Result[core.Datagram]] {
	return &datagramFuture{*d.intOp(h, kRecvFrom, nil, [][]byte{p})}
}

// Poll implements core.Future.
func (f *datagramFuture) Poll(cx *core.Context) (core.Result[core.Datagram], bool) {
	if f.err != nil {
		return core.Result[core.Datagram]{Err: f.err}, true
	}
	o := f.o
	res, err, ok := o.poll(cx)
	if !ok {
		return core.Result[core.Datagram]{}, false
	}
	if err == nil && res < 0 {
		err = syscallErr("recvmsg", res)
	}
	if err != nil {
		return core.Result[core.Datagram]{Err: err}, true
	}
	from := core.Addr{Net: o.rec.network, Addr: sockets.String(sockets.FromRaw(&o.x.sa, o.x.msg.Namelen))}
	return core.Result[core.Datagram]{Value: core.Datagram{N: int(res), From: from}}, true
}

// acceptFuture is the future of Accept.
type acceptFuture struct{ intFuture }

// Accept resolves to the next connection of a listening handle
// (IORING_OP_ACCEPT, one connection per request). Dropped after the
// kernel accepted, the connection is closed.
func (d *Driver) Accept(h core.Handle) core.Future[core.Result[core.Accepted]] {
	o, err := d.newOp(h, kAccept)
	if o != nil {
		o.x = &opExtra{}
	}
	return &acceptFuture{intFuture{o: o, err: err}}
}

// Poll implements core.Future.
func (f *acceptFuture) Poll(cx *core.Context) (core.Result[core.Accepted], bool) {
	if f.err != nil {
		return core.Result[core.Accepted]{Err: f.err}, true
	}
	o := f.o
	res, err, ok := o.poll(cx)
	if !ok {
		return core.Result[core.Accepted]{}, false
	}
	if err == nil && res < 0 {
		err = syscallErr("accept4", res)
	}
	if err != nil {
		return core.Result[core.Accepted]{Err: err}, true
	}
	h, _, err := o.home.register(int(res), kindStream, o.rec.network)
	if err != nil {
		unix.Close(int(res))
		return core.Result[core.Accepted]{Err: err}, true
	}
	peer := core.Addr{Net: o.rec.network, Addr: sockets.String(sockets.FromRaw(&o.x.sa, o.x.salen))}
	return core.Result[core.Accepted]{Value: core.Accepted{Handle: h, Peer: peer}}, true
}

// connectFuture is the future of Connect. Its first poll creates the
// socket, registers it under a handle and submits IORING_OP_CONNECT on
// it. Dropping it before it resolves closes the socket (which cancels the
// connect).
type connectFuture struct {
	d    *Driver
	to   sockets.Target
	opts core.SocketOptions
	err  error

	h    core.Handle
	o    *op
	done bool
}

// Connect resolves to a connected stream socket ("tcp*" host:port, or
// "unix"/"unixpacket" path). Host names other than "localhost" are looked
// up with Go's resolver when Connect is called, which may block.
func (d *Driver) Connect(network, address string, opts core.SocketOptions) core.Future[core.Result[core.Handle]] {
	f := &connectFuture{d: d, opts: opts}
	f.to, f.err = sockets.ResolveConnect(network, address)
	return f
}

// Poll implements core.Future.
func (f *connectFuture) Poll(cx *core.Context) (core.Result[core.Handle], bool) {
	if f.err != nil {
		return f.fail(f.err)
	}
	if f.o == nil {
		if f.d.closed.Load() {
			return f.fail(errDriverClosed)
		}
		fd, err := f.to.Socket(f.opts)
		if err != nil {
			return f.fail(err)
		}
		h, rec, err := f.d.register(fd, kindStream, f.to.Net)
		if err != nil {
			unix.Close(fd)
			return f.fail(err)
		}
		f.h = h
		f.o = &op{d: f.d, home: f.d, rec: rec, kind: kConnect, x: &opExtra{}}
		if f.o.x.salen, err = sockets.PutRaw(f.to.Sockaddr, &f.o.x.sa); err != nil {
			return f.fail(err)
		}
	}
	res, err, ok := f.o.poll(cx)
	if !ok {
		return core.Result[core.Handle]{}, false
	}
	if err == nil && res < 0 {
		err = syscallErr("connect", res)
	}
	if err != nil {
		return f.fail(err)
	}
	f.done = true
	return core.Result[core.Handle]{Value: f.h}, true
}

// fail resolves the future with err and closes the socket if one was
// made.
func (f *connectFuture) fail(err error) (core.Result[core.Handle], bool) {
	f.done = true
	if f.o != nil {
		_ = f.d.CloseHandle(f.h)
	}
	return core.Result[core.Handle]{Err: err}, true
}

// Drop closes the socket of a connect that has not resolved; closing it
// cancels the connect request.
func (f *connectFuture) Drop() {
	if f.done {
		return
	}
	f.done = true
	if f.o != nil {
		f.o.drop()
		_ = f.d.CloseHandle(f.h)
	}
}

// handleFuture is the future of OpenFile.
type handleFuture struct{ intFuture }

// OpenFile opens path (IORING_OP_OPENAT, relative to the working
// directory, close-on-exec) and resolves to a file handle. Dropped after
// the kernel opened the file, the file is closed.
func (d *Driver) OpenFile(path string, flag int, perm uint32) core.Future[core.Result[core.Handle]] {
	f := &handleFuture{intFuture{o: &op{d: d, home: d, rec: &d.misc, kind: kOpen, x: &opExtra{}}}}
	b, err := unix.ByteSliceFromString(path)
	if err != nil {
		f.err = &os.PathError{Op: "open", Path: path, Err: err}
		return f
	}
	f.o.x.path = b
	f.o.x.flag, f.o.x.perm = uint32(flag), perm
	return f
}

// Poll implements core.Future.
func (f *handleFuture) Poll(cx *core.Context) (core.Result[core.Handle], bool) {
	if f.err != nil {
		return core.Result[core.Handle]{Err: f.err}, true
	}
	o := f.o
	res, err, ok := o.poll(cx)
	if !ok {
		return core.Result[core.Handle]{}, false
	}
	if err == nil && res < 0 {
		err = syscallErr("openat", res)
	}
	if err != nil {
		return core.Result[core.Handle]{Err: err}, true
	}
	h, _, err := o.home.register(int(res), kindFile, "file")
	if err != nil {
		unix.Close(int(res))
		return core.Result[core.Handle]{Err: err}, true
	}
	return core.Result[core.Handle]{Value: h}, true
}

// unitFuture is the future of Fsync and CloseFile.
type unitFuture struct {
	intFuture
	name string
}

// Poll implements core.Future.
func (f *unitFuture) Poll(cx *core.Context) (core.Result[core.Unit], bool) {
	if f.err != nil {
		return core.Result[core.Unit]{Err: f.err}, true
	}
	res, err, ok := f.o.poll(cx)
	if !ok {
		return core.Result[core.Unit]{}, false
	}
	if err == nil && res < 0 {
		err = syscallErr(f.name, res)
	}
	return core.Result[core.Unit]{Err: err}, true
}

// Fsync flushes a file's data and metadata to storage (IORING_OP_FSYNC).
func (d *Driver) Fsync(h core.Handle) core.Future[core.Result[core.Unit]] {
	o, err := d.newOp(h, kFsync)
	return &unitFuture{intFuture{o: o, err: err}, "fsync"}
}

// CloseFile closes a file handle. The handle is released at once (its
// pending operations fail with net.ErrClosed); the descriptor is closed
// by an IORING_OP_CLOSE queued behind every earlier request naming it,
// submitted now, whose completion resolves the future (with the close's
// error, if any). The descriptor is closed whether or not the future is
// polled.
func (d *Driver) CloseFile(h core.Handle) core.Future[core.Result[core.Unit]] {
	rec := d.handles.Remove(h)
	if rec == nil {
		_, err := d.lookup(h)
		return &unitFuture{intFuture{err: err}, "close"}
	}
	d.closeRec(rec, errClosed, false)
	o := &op{d: d, home: d, rec: &d.misc, kind: kClose, fd: int32(rec.fd)}
	o.started = true
	o.arm(core.NoopWaker)
	o.mu.Lock()
	failed := o.ready && o.err != nil
	o.mu.Unlock()
	if failed {
		// The ring is closing: close the descriptor directly.
		err := unix.Close(rec.fd)
		o.mu.Lock()
		o.err = nil
		if err != nil {
			o.err = os.NewSyscallError("close", err)
		}
		o.mu.Unlock()
	}
	return &unitFuture{intFuture{o: o}, "close"}
}
