//go:build linux

package kqueue

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/drivers/kqueue/internal/kqemu"
)

// On Linux the driver runs against kqemu, an emulation of kqueue on top of
// epoll and poll(2), so that its logic is compiled and tested here. See
// NewEmulated.

type kevent = kqemu.Kevent

const (
	evfiltRead  = kqemu.EVFILT_READ
	evfiltWrite = kqemu.EVFILT_WRITE
	evfiltUser  = kqemu.EVFILT_USER
	evAdd       = kqemu.EV_ADD
	evClear     = kqemu.EV_CLEAR
	evEOF       = kqemu.EV_EOF
	evError     = kqemu.EV_ERROR
	noteTrigger = kqemu.NOTE_TRIGGER

	haveUserEvent = true
)

func mkKevent(ident, filter, flags int, fflags uint32) kevent {
	return kevent{Ident: uint64(ident), Filter: int16(filter), Flags: uint16(flags), Fflags: fflags}
}

type emuKqueue struct{ kq *kqemu.Kqueue }

func (k emuKqueue) kevent(changes, events []kevent, timeout *unix.Timespec) (int, error) {
	return k.kq.Kevent(changes, events, timeout)
}

func (k emuKqueue) closeFD(fd int) error { return k.kq.CloseFD(fd) }
func (k emuKqueue) close() error         { return k.kq.Close() }

// NewEmulated creates the driver on Linux over kqemu, an emulation of
// kqueue (see package drivers/kqueue/internal/kqemu), with an event buffer
// of events entries (1024 when events < 1). It exists so the driver's
// logic can be run and tested on Linux; it is not a production driver
// (use drivers/epoll there). userEvent selects EVFILT_USER for Unpark (as
// on darwin and freebsd) or a pipe (as on netbsd and openbsd).
func NewEmulated(events int, userEvent bool) (*Driver, error) {
	kq, err := kqemu.New()
	if err != nil {
		return nil, fmt.Errorf("kqueue: emulation: %w", err)
	}
	return newDriver(emuKqueue{kq}, events, userEvent)
}
