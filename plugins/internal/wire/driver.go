package wire

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/weftrt/weft/core"
)

// Driver operations. A request record is
//
//	op u8 | id uvarint | operands
//
// and a completion record is
//
//	id uvarint | status u8 | results (StatusOK) or an error (StatusErr)
//
// The host numbers operations from 1 in each session and never reuses a
// number; id 0 asks for no completion (the host's clean-up closes). The
// operands and results of each operation are listed next to its code.
//
// A completion with id 0 and StatusErr is the plugin's refusal of a
// request frame it could not parse (its error says what was wrong): the
// records before the fault were executed, the rest were not, so the host
// ends the session, failing every pending operation, and the supervisor
// starts a fresh process.
const (
	// network, address string; opts → handle, addr
	OpListen byte = iota + 1
	// handle → handle, peer addr
	OpAccept
	// network, address string; opts → handle
	OpConnect
	// handle, n uint → data bytes (len(data) is the count)
	OpRead
	// handle, data bytes → n uint
	OpWrite
	// handle, how u8 → nothing
	OpShutdown
	// handle, option u8, value int → nothing
	OpSetOption
	// handle → addr
	OpLocalAddr
	// handle → addr
	OpPeerAddr
	// handle → nothing
	OpCloseHandle
	// network, address string; opts → handle, addr
	OpBind
	// handle, address string → nothing
	OpConnectDatagram
	// handle, n uint → data bytes, from addr
	OpRecvFrom
	// handle, data bytes, to string → n uint
	OpSendTo
	// handle, group, iface string → nothing
	OpJoinGroup
	// id is the operation to cancel; there is no completion of its own:
	// the cancelled operation completes with StatusCancelled, or with its
	// result if it finished first.
	OpCancel
)

// MaxIO is the most bytes one read or write moves (the host's
// plugins.MaxIO): the plugin serves a larger read partly.
const MaxIO = 256 << 10

// Completion statuses.
const (
	StatusOK byte = iota
	StatusErr
	StatusCancelled
)

// PutOpts appends socket options.
func (e *Enc) PutOpts(o core.SocketOptions) {
	e.Bool(o.ReuseAddr)
	e.Bool(o.ReusePort)
	e.Int(int64(o.Backlog))
}

// Opts reads socket options.
func (d *Dec) Opts() core.SocketOptions {
	return core.SocketOptions{ReuseAddr: d.Bool(), ReusePort: d.Bool(), Backlog: int(d.Int())}
}

// PutAddr appends an address.
func (e *Enc) PutAddr(a core.Addr) {
	e.String(a.Net)
	e.String(a.Addr)
}

// Addr reads an address.
func (d *Dec) Addr() core.Addr { return core.Addr{Net: d.String(), Addr: d.String()} }

// Error codes. Errors cross the process boundary as values the host can
// match with errors.Is exactly as it would match the driver's own: the
// sentinel values come back as themselves, system call failures as
// *os.SyscallError around the same syscall.Errno, and anything else as a
// *RemoteError that keeps the message and answers errors.Is for the
// sentinels the original matched.
const (
	errEOF          byte = 1 // io.EOF itself
	errClosed       byte = 2 // net.ErrClosed itself
	errDriverClosed byte = 3 // matches core.ErrDriverClosed (and net.ErrClosed)
	errSyscall      byte = 4 // *os.SyscallError{Syscall, Errno}
	errErrno        byte = 5 // a bare syscall.Errno
	errOther        byte = 6 // message, errno or 0, sentinel flags
)

// Sentinel flags of errOther: which of these the original error matched.
var sentinels = []error{
	io.EOF, net.ErrClosed, core.ErrDriverClosed, os.ErrNotExist,
	os.ErrDeadlineExceeded, io.ErrUnexpectedEOF, os.ErrExist, os.ErrPermission,
}

// DriverClosedErr is how an error matching core.ErrDriverClosed comes back:
// it matches net.ErrClosed too, as the epoll driver's does.
var DriverClosedErr = fmt.Errorf("%w: %w", core.ErrDriverClosed, net.ErrClosed)

// PutError appends err.
func (e *Enc) PutError(err error) {
	var se *os.SyscallError
	var errno syscall.Errno
	switch {
	case err == io.EOF:
		e.U8(errEOF)
	case err == net.ErrClosed:
		e.U8(errClosed)
	case errors.Is(err, core.ErrDriverClosed):
		e.U8(errDriverClosed)
	case errors.As(err, &se) && se == err && errors.As(se.Err, &errno) && se.Err == error(errno):
		e.U8(errSyscall)
		e.String(se.Syscall)
		e.Uint(uint64(errno))
	case errors.As(err, &errno) && err == error(errno):
		e.U8(errErrno)
		e.Uint(uint64(errno))
	default:
		e.U8(errOther)
		e.String(err.Error())
		errno = 0
		errors.As(err, &errno)
		e.Uint(uint64(errno))
		var flags uint64
		for i, s := range sentinels {
			if errors.Is(err, s) {
				flags |= 1 << i
			}
		}
		e.Uint(flags)
	}
}

// Error reads an error written by PutError.
func (d *Dec) Error() error {
	switch code := d.U8(); code {
	case errEOF:
		return io.EOF
	case errClosed:
		return net.ErrClosed
	case errDriverClosed:
		return DriverClosedErr
	case errSyscall:
		name := d.String()
		return os.NewSyscallError(name, syscall.Errno(d.Uint()))
	case errErrno:
		return syscall.Errno(d.Uint())
	case errOther:
		return &RemoteError{Msg: d.String(), Errno: syscall.Errno(d.Uint()), flags: d.Uint()}
	default:
		if d.err == nil {
			d.Failf("unknown error code %d", code)
		}
		return d.err
	}
}

// RemoteError is an error of the plugin process that is neither a sentinel
// nor a plain system call failure. Its text is the original's; errors.Is
// matches the sentinels the original matched (io.EOF, net.ErrClosed,
// os.ErrNotExist, ...) and errors.As finds its syscall.Errno, if it had one.
type RemoteError struct {
	Msg   string
	Errno syscall.Errno // 0 when the original carried none
	flags uint64
}

func (e *RemoteError) Error() string { return e.Msg }

// Is reports whether the original error matched target.
func (e *RemoteError) Is(target error) bool {
	for i, s := range sentinels {
		if e.flags&(1<<i) != 0 && target == s {
			return true
		}
	}
	return false
}

// Unwrap returns the original's syscall.Errno, or nil.
func (e *RemoteError) Unwrap() error {
	if e.Errno == 0 {
		return nil
	}
	return e.Errno
}
