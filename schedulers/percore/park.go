package percore

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

// Parker states.
const (
	// parkAwake: running, no notification pending.
	parkAwake uint32 = iota
	// parkAsleep: asleep in its driver, or on its channel without one.
	parkAsleep
	// parkNotified: an unpark is pending; the next sleep returns at once.
	parkNotified
)

// parker puts one worker to sleep on its own driver (or, without a driver,
// on a channel) and wakes it. Its state machine makes an unpark that comes
// before the sleep impossible to lose, and spares the system call of
// Driver.Unpark when the worker is awake:
//
//	unpark:  prev := swap(NOTIFIED); if prev == ASLEEP, wake the sleeper
//	sleep:   CAS NOTIFIED->AWAKE succeeds?  return (consume it)
//	         CAS AWAKE->ASLEEP fails?       it was NOTIFIED: consume, return
//	         sleep in the driver; store AWAKE
//
// Whichever of the swap and the CAS comes first, the other sees it. A
// sender publishes its work (a mailbox push, a global queue push) before
// unpark, and the worker looks at every queue after each sleep, so the
// store of AWAKE after the sleep, which may swallow a notification that
// arrived late, loses no work: the worker is about to look anyway.
type parker struct {
	state  atomic.Uint32
	driver core.Driver // nil without a driver
	ch     chan struct{}
	timer  *time.Timer
}

func newParker() *parker {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &parker{ch: make(chan struct{}, 1), timer: t}
}

// unpark wakes the worker or makes its next sleep return at once. Any
// goroutine may call it.
func (p *parker) unpark() {
	if p.state.Load() == parkNotified {
		// Already pending: the swap would change nothing.
		return
	}
	if p.state.Swap(parkNotified) == parkAsleep {
		if p.driver != nil {
			p.driver.Unpark()
			return
		}
		select {
		case p.ch <- struct{}{}:
		default: // a token is already waiting; one is enough
		}
	}
}

// consume takes a pending notification, reporting whether there was one.
func (p *parker) consume() bool { return p.state.CompareAndSwap(parkNotified, parkAwake) }

// sleep waits at most timeout (negative: until unparked or an I/O event)
// in the driver or on the channel. It returns the driver's Park error.
// Only the worker's own goroutine calls it.
func (p *parker) sleep(timeout time.Duration) error {
	if p.consume() {
		return nil
	}
	if !p.state.CompareAndSwap(parkAwake, parkAsleep) {
		p.state.Store(parkAwake)
		return nil
	}
	var err error
	if p.driver != nil {
		err = p.driver.Park(timeout)
	} else {
		switch {
		case timeout < 0:
			<-p.ch
		case timeout > 0:
			p.timer.Reset(timeout)
			select {
			case <-p.ch:
			case <-p.timer.C:
			}
			p.timer.Stop()
		}
	}
	// Consume the notification, if any, that ended the sleep. A token left
	// in the channel by a late unpark makes a later sleep return early,
	// which the worker treats as a spurious wake.
	p.state.Store(parkAwake)
	return err
}
