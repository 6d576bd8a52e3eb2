//go:build darwin || freebsd || netbsd || openbsd

package kqueue

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// kevent is the platform's struct kevent. The driver reads its Ident,
// Filter, Flags, Fflags and Data fields (whose integer types differ between
// the systems, hence the conversions at every use) and builds changes with
// mkKevent.
type kevent = unix.Kevent_t

// The filters and flags the driver uses, from the platform's headers.
const (
	evfiltRead  = unix.EVFILT_READ
	evfiltWrite = unix.EVFILT_WRITE
	evAdd       = unix.EV_ADD
	evClear     = unix.EV_CLEAR
	evEOF       = unix.EV_EOF
	evError     = unix.EV_ERROR
)

// mkKevent builds a change.
func mkKevent(ident, filter, flags int, fflags uint32) kevent {
	var k kevent
	unix.SetKevent(&k, ident, filter, flags)
	k.Fflags = fflags
	return k
}

// sysKqueue is a real kernel event queue.
type sysKqueue struct{ fd int }

// openKqueue creates a kernel event queue, close-on-exec.
func openKqueue() (kqueueSys, error) {
	fd, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kqueue: %w", os.NewSyscallError("kqueue", err))
	}
	unix.CloseOnExec(fd)
	return &sysKqueue{fd: fd}, nil
}

func (k *sysKqueue) kevent(changes, events []kevent, timeout *unix.Timespec) (int, error) {
	return unix.Kevent(k.fd, changes, events, timeout)
}

// closeFD closes a descriptor; the kernel drops its knotes.
func (k *sysKqueue) closeFD(fd int) error { return unix.Close(fd) }

func (k *sysKqueue) close() error { return unix.Close(k.fd) }

// New creates a kernel event queue with an event buffer of events entries
// (1024 when events < 1) and the means for Unpark (an EVFILT_USER event
// on darwin and freebsd, a pipe on netbsd and openbsd).
func New(events int) (*Driver, error) {
	sys, err := openKqueue()
	if err != nil {
		return nil, err
	}
	return newDriver(sys, events, haveUserEvent)
}
