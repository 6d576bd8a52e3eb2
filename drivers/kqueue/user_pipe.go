//go:build netbsd || openbsd

package kqueue

// haveUserEvent says whether Unpark can trigger an EVFILT_USER event
// instead of writing to a pipe. golang.org/x/sys has no EVFILT_USER for
// netbsd (NetBSD gained it only in 10) or openbsd, so these use the pipe.
const haveUserEvent = false

// Never used where haveUserEvent is false: the driver tests
// Driver.userEvent before it compares a filter with evfiltUser.
const (
	evfiltUser  = -0x7fff
	noteTrigger = 0
)
