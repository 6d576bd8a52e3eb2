//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
)

// connectOp is the future of Connect. Its first poll creates and registers
// the socket and starts a non-blocking connect; when that reports
// EINPROGRESS it waits for writability and reads the outcome from SO_ERROR,
// as Go's net does. Dropping it before it resolves closes the socket.
type connectOp struct {
	d       *Driver
	network string
	sa      unix.Sockaddr
	fam     int
	sotype  int
	norm    string
	opts    core.SocketOptions
	err     error

	h       core.Handle
	io      *scheduledIO
	w       waiter
	started bool
	done    bool
}

// Connect resolves to a connected stream socket ("tcp*" host:port, or
// "unix"/"unixpacket" path). Host names other than "localhost" are looked
// up with Go's resolver when Connect is called, which may block.
func (d *Driver) Connect(network, address string, opts core.SocketOptions) core.Future[core.Result[core.Handle]] {
	op := &connectOp{d: d, network: network, opts: opts}
	_, op.sa, op.err = resolve(network, address, false)
	if op.err == nil {
		op.fam, op.sotype, op.norm, op.err = family(network, op.sa)
		if op.err == nil && op.sotype == unix.SOCK_DGRAM {
			op.err = &os.SyscallError{Syscall: "connect", Err: unix.EPROTOTYPE}
		}
	}
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
		ev, err, ok := op.io.pollReady(cx, &op.w, interestWrite)
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
		op.io.clearReadiness(ev, ^uint64(0))
	}
}

// start creates and connects the socket, then registers it. It sets done
// when the connection completed at once.
//
// The socket is registered after connect(2), as mio does, not before: the
// filters of a socket that is not yet connecting say nothing useful (and
// under Linux, where the driver is tested, an unconnected TCP socket polls
// as hung up, which a Park on another worker would record). Registered
// after, the socket is connecting (or done), and adding the filters
// reports whatever state it reached.
func (op *connectOp) start() error {
	fd, err := socket(op.network, op.fam, op.sotype, op.opts)
	if err != nil {
		return err
	}
	for {
		err = unix.Connect(fd, op.sa)
		if err != unix.EINTR {
			break
		}
	}
	switch err {
	case nil:
		op.done = true
	case unix.EINPROGRESS, unix.EALREADY:
	default:
		unix.Close(fd)
		return os.NewSyscallError("connect", err)
	}
	h, io, err := op.d.register(fd, kindStream, op.norm, 0)
	if err != nil {
		unix.Close(fd)
		op.done = false
		return err
	}
	op.h, op.io = h, io
	return nil
}

// check reads the outcome of a connect in progress: (true, nil) when
// connected, (false, nil) when it is still in progress (a spurious
// writability), or the error the connect failed with.
func (op *connectOp) check() (bool, error) {
	var connected bool
	err := op.d.withFD(op.h, func(io *scheduledIO) error {
		soerr, err := unix.GetsockoptInt(io.fd.n, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return os.NewSyscallError("getsockopt", err)
		}
		switch e := unix.Errno(soerr); e {
		case 0:
		case unix.EINPROGRESS, unix.EALREADY, unix.EINTR:
			return nil
		default:
			return os.NewSyscallError("connect", e)
		}
		// SO_ERROR is clear; make sure the socket is really connected.
		if _, err := unix.Getpeername(io.fd.n); err != nil {
			if err == unix.ENOTCONN {
				return nil
			}
			return os.NewSyscallError("getpeername", err)
		}
		connected = true
		return nil
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
	if op.w.linked.Load() {
		op.io.remove(&op.w)
	}
	_ = op.d.CloseHandle(op.h)
	op.io = nil
}

// Drop closes the socket of a connect that has not resolved.
func (op *connectOp) Drop() {
	if !op.done {
		op.done = true
		op.release()
	}
}
