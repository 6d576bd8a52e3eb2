//go:build darwin || freebsd || netbsd || openbsd || linux

package readiness

import "sync/atomic"

// FD counts the system calls using a descriptor so that closing the
// handle never closes the descriptor under a call in flight (which could
// then act on an unrelated descriptor that reused the number). It is a
// small cousin of Go's internal fdMutex:
//
//	acquire:   v = add(1);  closing set?  release, fail
//	release:   v = add(-1); v == closing? CAS closing -> closing|closed, close
//	close:     v = add(closing); v == closing? same CAS, close
//
// Whoever takes the count to "closing, no calls" closes the descriptor,
// and the CAS to closed makes sure only one of them does, even when a late
// acquire bounces off in between (it may be the one that closes). The
// closing is done here, by whichever method wins, so no caller can drop
// the duty.
type FD struct {
	// v holds fdClosing | fdClosed | count. Every operation is an atomic
	// read-modify-write, ordered with the others on the same word.
	v atomic.Uint64
	n int // the descriptor, immutable after registration
	// close closes n. It is the driver's (epoll's is close(2); kqueue's
	// goes through its back end, which must see the close: the emulation
	// drops the descriptor's knotes), set by Init or NewIO before the FD
	// is shared and never changed; nil closes nothing.
	close func(int)
}

const (
	fdClosing uint64 = 1 << 63
	fdClosed  uint64 = 1 << 62
)

// Acquire reports whether the descriptor may be used; if it returns true
// the caller must call Release when its system call returns.
func (r *FD) Acquire() bool {
	if r.v.Add(1)&fdClosing != 0 {
		r.Release()
		return false
	}
	return true
}

// Release ends a use, and closes the descriptor if the handle was closed
// while the call ran and this was the last use.
func (r *FD) Release() {
	if r.v.Add(^uint64(0)) == fdClosing {
		r.finish()
	}
}

// BeginClose marks the descriptor closing and closes it at once if no
// call uses it; otherwise the last release does. Calls after the first do
// nothing.
func (r *FD) BeginClose() {
	for {
		cur := r.v.Load()
		if cur&fdClosing != 0 {
			return
		}
		if r.v.CompareAndSwap(cur, cur|fdClosing) {
			if cur == 0 {
				r.finish()
			}
			return
		}
	}
}

// finish closes the descriptor if nobody has: the CAS from "closing, no
// calls" to closed has exactly one winner.
func (r *FD) finish() {
	if r.v.CompareAndSwap(fdClosing, fdClosing|fdClosed) {
		if r.close != nil {
			r.close(r.n)
		}
	}
}

// IsClosed reports whether the descriptor was closed.
func (r *FD) IsClosed() bool { return r.v.Load()&fdClosed != 0 }

// Init sets the descriptor and how to close it, before the FD is shared.
func (r *FD) Init(n int, closeFn func(int)) { r.n, r.close = n, closeFn }

// N returns the descriptor number.
func (r *FD) N() int { return r.n }
