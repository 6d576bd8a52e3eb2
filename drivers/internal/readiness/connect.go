//go:build darwin || freebsd || netbsd || openbsd || linux

package readiness

import (
	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/sockets"
)

// connectOp is the future of Connect. Its first poll creates and registers
// the socket and starts a non-blocking connect; when that reports
// EINPROGRESS it waits for writability and reads the outcome from SO_ERROR,
// as Go's net does. Dropping it before it resolves closes the socket.
type connectOp struct {
	r    Registry
	to   sockets.Target
	opts core.SocketOptions
	err  error

	h       core.Handle
	io      *IO
	w       Waiter
	started bool
	done    bool
}

// Connect is core.Driver.Connect: it resolves to a connected stream
// socket ("tcp*" host:port, or "unix"/"unixpacket" path). Host names other
// than "localhost" are looked up with Go's resolver when Connect is
// called, which may block.
func (o *Ops) Connect(network, address string, opts core.SocketOptions) core.Future[core.Result[core.Handle]] {
	op := &connectOp{r: o.r, opts: opts}
	op.to, op.err = sockets.ResolveConnect(network, address)
	return op
}

// Poll implements core.Future.
func (op *connectOp) Poll(cx *core.Context) (core.Result[core.Handle], bool) {
	if op.err != nil {
		return op.fail(op.err)
	}
	if !op.started {
		op.started = true
		if err := op.start(); err != nil {
			return op.fail(err)
		}
		if op.done {
			return core.Result[core.Handle]{Value: op.h}, true
		}
	}
	if !cx.Proceed() {
		return core.Result[core.Handle]{}, false
	}
	for {
		ev, err, ok := op.io.PollReady(cx, &op.w, InterestWrite)
		if !ok {
			return core.Result[core.Handle]{}, false
		}
		if err != nil {
			return op.fail(err)
		}
		connected, err := op.check()
		if err != nil {
			return op.fail(err)
		}
		if connected {
			op.done = true
			return core.Result[core.Handle]{Value: op.h}, true
		}
		op.io.ClearReadiness(ev, ^uint64(0))
	}
}

// start creates and connects the socket, then registers it. It sets done
// when the connection completed at once.
//
// The socket is registered after connect(2), as mio does, not before: an
// unconnected TCP socket polls as hung up under Linux (EPOLLHUP, and so in
// the kqueue emulation too), and a Park running on another worker between
// registration and connect(2) would record that hang-up in the readiness
// word; a kqueue filter of a socket that is not yet connecting says
// nothing useful either. Registered after, the socket is connecting (or
// done), and the registration reports whatever state it reached.
func (op *connectOp) start() error {
	fd, err := op.to.Socket(op.opts)
	if err != nil {
		return err
	}
	// Not registered yet, the descriptor is closed with close(2) on
	// failure, not with the driver's CloseFD.
	done, err := op.to.StartConnect(fd)
	if err != nil {
		unix.Close(fd)
		return err
	}
	h, io, err := op.r.Register(fd, Stream, op.to.Net, 0)
	if err != nil {
		unix.Close(fd)
		return err
	}
	op.h, op.io, op.done = h, io, done
	return nil
}

// check reads the outcome of a connect in progress: (true, nil) when
// connected, (false, nil) when it is still in progress (a spurious
// writability), or the error the connect failed with.
func (op *connectOp) check() (bool, error) {
	var connected bool
	err := WithFD(op.r, op.h, func(io *IO) error {
		var err error
		connected, err = sockets.ConnectResult(io.FD.N())
		return err
	})
	return connected, err
}

// fail resolves the future with err and closes the socket if one was made.
func (op *connectOp) fail(err error) (core.Result[core.Handle], bool) {
	op.done = true
	op.release()
	return core.Result[core.Handle]{Err: err}, true
}

func (op *connectOp) release() {
	if op.io == nil {
		return
	}
	if op.w.Linked() {
		op.io.Remove(&op.w)
	}
	_ = op.r.CloseHandle(op.h)
	op.io = nil
}

// Drop closes the socket of a connect that has not resolved.
func (op *connectOp) Drop() {
	if !op.done {
		op.done = true
		op.release()
	}
}
