package plugins

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
)

// This file holds the Driver's operations: synchronous ones are a round
// trip on the calling goroutine; asynchronous ones are futures that send
// their request at the first poll (when the window has room) and take
// their result when Park has woken them.

func encodeSocket(network, address string, opts core.SocketOptions) func(e *wire.Enc) {
	return func(e *wire.Enc) {
		e.String(network)
		e.String(address)
		e.PutOpts(opts)
	}
}

// Listen implements core.Driver.
func (d *Driver) Listen(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	o, err := d.call(wire.OpListen, 0, false, encodeSocket(network, address, opts))
	if err != nil {
		return 0, core.Addr{}, err
	}
	return o.handle, o.addr, nil
}

// Bind implements core.DatagramIO.
func (d *Driver) Bind(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	o, err := d.call(wire.OpBind, 0, false, encodeSocket(network, address, opts))
	if err != nil {
		return 0, core.Addr{}, err
	}
	return o.handle, o.addr, nil
}

// Shutdown implements core.Driver.
func (d *Driver) Shutdown(h core.Handle, how core.ShutdownHow) error {
	_, err := d.call(wire.OpShutdown, h, true, func(e *wire.Enc) { e.U8(byte(how)) })
	return err
}

// SetOption implements core.Driver.
func (d *Driver) SetOption(h core.Handle, opt core.SocketOption, value int) error {
	_, err := d.call(wire.OpSetOption, h, true, func(e *wire.Enc) {
		e.U8(byte(opt))
		e.Int(int64(value))
	})
	return err
}

// LocalAddr implements core.Driver.
func (d *Driver) LocalAddr(h core.Handle) (core.Addr, error) {
	o, err := d.call(wire.OpLocalAddr, h, true, nil)
	if err != nil {
		return core.Addr{}, err
	}
	return o.addr, nil
}

// PeerAddr implements core.Driver.
func (d *Driver) PeerAddr(h core.Handle) (core.Addr, error) {
	o, err := d.call(wire.OpPeerAddr, h, true, nil)
	if err != nil {
		return core.Addr{}, err
	}
	return o.addr, nil
}

// CloseHandle implements core.Driver. It does not wait for the plugin:
// the handle is checked and forgotten here, and the plugin, which executes
// operations in order, fails what is pending on it and closes it (after
// the writes already reported written, for a stream).
func (d *Driver) CloseHandle(h core.Handle) error {
	d.mu.Lock()
	_, hh, _, err := d.sessionForLocked(h, true)
	if err != nil {
		d.mu.Unlock()
		return err
	}
	if hh.syncClose {
		// Listeners and datagram sockets: the close is a round trip.
		// The request is encoded before the handle is forgotten.
		d.mu.Unlock()
		_, err := d.call(wire.OpCloseHandle, h, true, nil)
		d.mu.Lock()
		d.forgetLocked(h)
		d.mu.Unlock()
		d.signalPark()
		return err
	}
	d.closeLocked(h)
	wake := len(d.wakes) > 0
	d.mu.Unlock()
	if wake {
		d.signalPark()
	}
	return err
}

// ConnectDatagram implements core.DatagramIO.
func (d *Driver) ConnectDatagram(h core.Handle, address string) error {
	_, err := d.call(wire.OpConnectDatagram, h, true, func(e *wire.Enc) { e.String(address) })
	return err
}

// JoinGroup implements core.DatagramIO.
func (d *Driver) JoinGroup(h core.Handle, group, iface string) error {
	_, err := d.call(wire.OpJoinGroup, h, true, func(e *wire.Enc) {
		e.String(group)
		e.String(iface)
	})
	return err
}

// opFuture is what every asynchronous operation's future shares.
type opFuture struct {
	d    *Driver
	h    core.Handle
	o    *hostOp
	done bool // the result was returned (or the future dropped)
}

// result waits for the operation: it reports whether it completed (after
// which its fields may be read without the lock: only the future's owner
// touches a completed operation).
func (f *opFuture) result(cx *core.Context) bool {
	f.d.mu.Lock()
	ok := f.d.awaitLocked(f.o, cx)
	f.d.mu.Unlock()
	if ok {
		f.done = true
	}
	return ok
}

// Drop implements core.Dropper.
func (f *opFuture) Drop() {
	if f.o != nil && !f.done {
		f.d.drop(f.o, false)
	}
	f.done = true
}

// Read implements core.Driver.
func (d *Driver) Read(h core.Handle, p []byte) core.Future[core.Result[int]] {
	f := &readFuture{opFuture: opFuture{d: d, h: h}}
	f.one[0] = p
	f.bufs = f.one[:]
	return f
}

// Readv implements core.VectoredIO: one read of the buffers' total size
// (at most MaxIO), scattered into them.
func (d *Driver) Readv(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	return &readFuture{opFuture: opFuture{d: d, h: h}, bufs: bufs}
}

type readFuture struct {
	opFuture
	bufs [][]byte
	one  [1][]byte
}

// Poll implements core.Future. A read takes what dropped reads of the
// handle left behind first (see hostHandle), so no abandoned read loses
// a byte.
func (f *readFuture) Poll(cx *core.Context) (core.Result[int], bool) {
	for {
		if f.o == nil {
			n, err, done, o := f.d.startRead(cx, f.h, f.bufs)
			if done {
				f.done = true
				return core.Result[int]{Value: n, Err: err}, true
			}
			f.o = o
			return core.Result[int]{}, false
		}
		f.d.mu.Lock()
		if f.o.restart {
			f.d.mu.Unlock()
			f.o = nil
			continue
		}
		ok := f.d.awaitLocked(f.o, cx)
		f.d.mu.Unlock()
		if !ok {
			return core.Result[int]{}, false
		}
		f.done = true
		break
	}
	if f.o.err != nil {
		return core.Result[int]{Err: f.o.err}, true
	}
	// The one copy of read data in the host: from the completion frame
	// into the caller's buffers.
	n := scatter(f.o.data, f.bufs)
	f.o.data = nil
	return core.Result[int]{Value: n}, true
}

// Rearm readies a completed read for a new one into p (lib/wnet reuses
// futures this way for poll-style I/O).
func (f *readFuture) Rearm(p []byte) bool {
	if !f.done || f.o == nil || f.o.state != opDone || len(f.bufs) != 1 {
		return false
	}
	f.o, f.done = nil, false
	f.one[0] = p
	f.bufs = f.one[:]
	return true
}

// Write implements core.Driver. At most MaxIO bytes are written.
func (d *Driver) Write(h core.Handle, p []byte) core.Future[core.Result[int]] {
	f := &writeFuture{opFuture: opFuture{d: d, h: h}, op: wire.OpWrite}
	f.one[0] = p
	f.bufs = f.one[:]
	return f
}

// Writev implements core.VectoredIO: the buffers are gathered into one
// write (at most MaxIO bytes).
func (d *Driver) Writev(h core.Handle, bufs [][]byte) core.Future[core.Result[int]] {
	return &writeFuture{opFuture: opFuture{d: d, h: h}, op: wire.OpWrite, bufs: bufs}
}

// SendTo implements core.DatagramIO.
func (d *Driver) SendTo(h core.Handle, p []byte, to string) core.Future[core.Result[int]] {
	f := &writeFuture{opFuture: opFuture{d: d, h: h}, op: wire.OpSendTo, to: to}
	f.one[0] = p
	f.bufs = f.one[:]
	return f
}

type writeFuture struct {
	opFuture
	op   byte
	to   string
	bufs [][]byte
	one  [1][]byte
}

// Poll implements core.Future. A stream write is write-behind: it
// resolves as soon as its bytes are queued for the plugin.
func (f *writeFuture) Poll(cx *core.Context) (core.Result[int], bool) {
	if f.op == wire.OpWrite {
		n, err, ok := f.d.writeBehind(cx, f.h, f.bufs)
		if !ok {
			return core.Result[int]{}, false
		}
		f.done = true
		return core.Result[int]{Value: n, Err: err}, true
	}
	if f.o == nil {
		total := clampTotal(f.bufs)
		o, err := f.d.submit(cx, f.op, f.h, true, total, func(e *wire.Enc) {
			dst := e.BytesN(total)
			for _, b := range f.bufs {
				if len(dst) == 0 {
					break
				}
				dst = dst[copy(dst, b):]
			}
			e.String(f.to)
		})
		if err != nil {
			f.done = true
			return core.Result[int]{Err: err}, true
		}
		f.o = o
		return core.Result[int]{}, false
	}
	if !f.result(cx) {
		return core.Result[int]{}, false
	}
	if f.o.err != nil {
		return core.Result[int]{Err: f.o.err}, true
	}
	return core.Result[int]{Value: f.o.n}, true
}

// Rearm readies a completed write for a new one of p.
func (f *writeFuture) Rearm(p []byte) bool {
	if !f.done || len(f.bufs) != 1 || f.op != wire.OpWrite {
		return false
	}
	f.done = false
	f.one[0] = p
	f.bufs = f.one[:]
	return true
}

// RecvFrom implements core.DatagramIO.
func (d *Driver) RecvFrom(h core.Handle, p []byte) core.Future[core.Result[core.Datagram]] {
	return &recvFuture{opFuture: opFuture{d: d, h: h}, p: p}
}

type recvFuture struct {
	opFuture
	p []byte
}

// Poll implements core.Future.
func (f *recvFuture) Poll(cx *core.Context) (core.Result[core.Datagram], bool) {
	if f.o == nil {
		n := min(len(f.p), MaxIO)
		o, err := f.d.submit(cx, wire.OpRecvFrom, f.h, true, n, func(e *wire.Enc) { e.Uint(uint64(n)) })
		if err != nil {
			f.done = true
			return core.Result[core.Datagram]{Err: err}, true
		}
		f.o = o
		return core.Result[core.Datagram]{}, false
	}
	if !f.result(cx) {
		return core.Result[core.Datagram]{}, false
	}
	if f.o.err != nil {
		return core.Result[core.Datagram]{Err: f.o.err}, true
	}
	n := copy(f.p, f.o.data)
	f.o.data = nil
	return core.Result[core.Datagram]{Value: core.Datagram{N: n, From: f.o.addr}}, true
}

// Accept implements core.Driver.
func (d *Driver) Accept(h core.Handle) core.Future[core.Result[core.Accepted]] {
	return &acceptFuture{opFuture: opFuture{d: d, h: h}}
}

type acceptFuture struct{ opFuture }

// Poll implements core.Future.
func (f *acceptFuture) Poll(cx *core.Context) (core.Result[core.Accepted], bool) {
	if f.o == nil {
		o, err := f.d.submit(cx, wire.OpAccept, f.h, true, 0, nil)
		if err != nil {
			f.done = true
			return core.Result[core.Accepted]{Err: err}, true
		}
		f.o = o
		return core.Result[core.Accepted]{}, false
	}
	if !f.result(cx) {
		return core.Result[core.Accepted]{}, false
	}
	if f.o.err != nil {
		return core.Result[core.Accepted]{Err: f.o.err}, true
	}
	return core.Result[core.Accepted]{Value: core.Accepted{Handle: f.o.handle, Peer: f.o.addr}}, true
}

// Connect implements core.Driver.
func (d *Driver) Connect(network, address string, opts core.SocketOptions) core.Future[core.Result[core.Handle]] {
	return &connectFuture{opFuture: opFuture{d: d}, network: network, address: address, opts: opts}
}

type connectFuture struct {
	opFuture
	network, address string
	opts             core.SocketOptions
}

// Poll implements core.Future.
func (f *connectFuture) Poll(cx *core.Context) (core.Result[core.Handle], bool) {
	if f.o == nil {
		o, err := f.d.submit(cx, wire.OpConnect, 0, false, 0, encodeSocket(f.network, f.address, f.opts))
		if err != nil {
			f.done = true
			return core.Result[core.Handle]{Err: err}, true
		}
		f.o = o
		return core.Result[core.Handle]{}, false
	}
	if !f.result(cx) {
		return core.Result[core.Handle]{}, false
	}
	if f.o.err != nil {
		return core.Result[core.Handle]{Err: f.o.err}, true
	}
	return core.Result[core.Handle]{Value: f.o.handle}, true
}

var (
	_ core.Driver     = (*Driver)(nil)
	_ core.VectoredIO = (*Driver)(nil)
	_ core.DatagramIO = (*Driver)(nil)
)
