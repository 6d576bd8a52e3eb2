//go:build darwin || freebsd

package kqueue

import "golang.org/x/sys/unix"

// haveUserEvent says whether Unpark can trigger an EVFILT_USER event
// instead of writing to a pipe.
const haveUserEvent = true

const (
	evfiltUser  = unix.EVFILT_USER
	noteTrigger = unix.NOTE_TRIGGER
)
