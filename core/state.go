package core

import "sync/atomic"

// Bits of a task's state word. The word is a plain atomic.Uint32; every
// transition is a compare-and-swap loop so that each one reads and writes all
// flags together. Go's garbage collector owns task memory, so unlike Tokio
// there is no reference count in the word.
const (
	// stRunning is the task's lock: whoever sets it with a CAS may touch the
	// future. It is held while polling and while cancelling.
	stRunning uint32 = 1 << iota
	// stComplete: the future finished or was cancelled and is gone. Never
	// cleared, never set together with stRunning.
	stComplete
	// stNotified: the task sits in a run queue (when stRunning is clear) or
	// must be put back in one when the current poll ends (when it is set).
	stNotified
	// stJoinInterest: a JoinHandle still wants the output.
	stJoinInterest
	// stJoinWaker: the JoinHandle's waker is published; while it is set the
	// handle may only read the waker field and the runtime may read it once
	// stComplete is set. While it is clear the handle owns the field.
	stJoinWaker
	// stCancelled: the task must be cancelled the next time a worker picks it
	// up (or right after the poll that is running now).
	stCancelled
)

// stInitial is the state of a new task: it is queued as soon as it is spawned
// and its JoinHandle exists.
const stInitial = stNotified | stJoinInterest

type state struct{ v atomic.Uint32 }

func (s *state) load() uint32 { return s.v.Load() }

func (s *state) cas(old, new uint32) bool { return s.v.CompareAndSwap(old, new) }

// runOutcome is what transitionToRunning found.
type runOutcome uint8

const (
	runPoll   runOutcome = iota // the caller holds RUNNING and must poll
	runCancel                   // the caller holds RUNNING and must cancel
	runSkip                     // nothing to do: complete, or already running
)

// transitionToRunning is called by the worker that took the task out of a
// queue. It clears NOTIFIED and takes RUNNING.
func (s *state) transitionToRunning() runOutcome {
	for {
		cur := s.load()
		if cur&(stRunning|stComplete) != 0 || cur&stNotified == 0 {
			return runSkip
		}
		if s.cas(cur, (cur&^stNotified)|stRunning) {
			if cur&stCancelled != 0 {
				return runCancel
			}
			return runPoll
		}
	}
}

// idleOutcome is what transitionToIdle found after a pending poll.
type idleOutcome uint8

const (
	idleOK        idleOutcome = iota // released; someone else will wake it
	idleNotified                     // released but woken during the poll: re-queue it
	idleCancelled                    // still RUNNING: aborted during the poll, cancel now
)

// transitionToIdle releases RUNNING after a poll returned pending. A wake
// that arrived during the poll left NOTIFIED set without queueing the task
// (see transitionToNotified); it is reported so the caller re-queues it, and
// that is how a wake during a poll is never lost.
func (s *state) transitionToIdle() idleOutcome {
	for {
		cur := s.load()
		if cur&stCancelled != 0 {
			return idleCancelled
		}
		if s.cas(cur, cur&^stRunning) {
			if cur&stNotified != 0 {
				return idleNotified
			}
			return idleOK
		}
	}
}

// transitionToComplete swaps RUNNING for COMPLETE and returns the previous
// word, from which the caller learns whether a JoinHandle is interested and
// whether its waker is published.
func (s *state) transitionToComplete() uint32 {
	for {
		cur := s.load()
		if s.cas(cur, (cur&^stRunning)|stComplete) {
			return cur
		}
	}
}

// transitionToNotified is a wake. It reports true when the caller must put
// the task in a run queue: the task was idle. When the task is running it
// only records NOTIFIED for the poller; when it is queued or complete it does
// nothing.
func (s *state) transitionToNotified() bool {
	for {
		cur := s.load()
		if cur&(stComplete|stNotified) != 0 {
			return false
		}
		if s.cas(cur, cur|stNotified) {
			return cur&stRunning == 0
		}
	}
}

// transitionToNotifiedAndCancel is an abort. It reports true when the caller
// must queue the task so that a worker cancels it.
func (s *state) transitionToNotifiedAndCancel() bool {
	for {
		cur := s.load()
		switch {
		case cur&(stComplete|stCancelled) != 0:
			return false
		case cur&stRunning != 0:
			// The poller sees CANCELLED in transitionToIdle.
			if s.cas(cur, cur|stCancelled|stNotified) {
				return false
			}
		case cur&stNotified != 0:
			// Already queued: the worker that pops it cancels it.
			if s.cas(cur, cur|stCancelled) {
				return false
			}
		default:
			if s.cas(cur, cur|stCancelled|stNotified) {
				return true
			}
		}
	}
}

// transitionToShutdown is used when a runtime shuts down. It reports true
// when the caller took RUNNING and must cancel the task itself; when the task
// is running elsewhere it marks it CANCELLED for the poller.
func (s *state) transitionToShutdown() bool {
	for {
		cur := s.load()
		switch {
		case cur&stComplete != 0:
			return false
		case cur&stRunning != 0:
			if cur&stCancelled != 0 || s.cas(cur, cur|stCancelled) {
				return false
			}
		default:
			if s.cas(cur, (cur|stRunning|stCancelled)&^stNotified) {
				return true
			}
		}
	}
}

// setJoinWaker publishes the join waker. It fails when the task completed
// first; the handle then still owns the field.
func (s *state) setJoinWaker() bool {
	for {
		cur := s.load()
		if cur&stComplete != 0 {
			return false
		}
		if s.cas(cur, cur|stJoinWaker) {
			return true
		}
	}
}

// unsetJoinWaker takes the join waker back so the handle may replace it. It
// fails when the task completed first (the runtime may be reading it).
func (s *state) unsetJoinWaker() bool {
	for {
		cur := s.load()
		if cur&stComplete != 0 {
			return false
		}
		if s.cas(cur, cur&^stJoinWaker) {
			return true
		}
	}
}

// dropJoinInterest clears JOIN_INTEREST and returns the previous word.
func (s *state) dropJoinInterest() uint32 {
	for {
		cur := s.load()
		if s.cas(cur, cur&^stJoinInterest) {
			return cur
		}
	}
}

// shutdownCandidate reports whether transitionToShutdown could still make a
// difference: the task is neither complete nor running with CANCELLED set.
func (s *state) shutdownCandidate() bool {
	cur := s.load()
	if cur&stComplete != 0 {
		return false
	}
	return cur&(stRunning|stCancelled) != stRunning|stCancelled
}
