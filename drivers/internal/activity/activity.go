// Package activity counts what a driver has registered or in flight and
// tells the scheduler when the count leaves zero: the shared half of
// core.QuiescentDriver for weft's in-process drivers.
package activity

import "sync/atomic"

// Counter counts live registrations (or in-flight operations) and calls
// the hook set with OnActive on every transition from zero to one. The
// zero value is ready to use and quiescent. All methods are safe for
// concurrent use.
type Counter struct {
	n    atomic.Int64
	hook atomic.Pointer[func()]
}

// Add counts one more registration. When it is the first, Add calls the
// hook after the count is visible, so a scheduler that announces a sleep
// off the driver and then reads Quiescent (see core.QuiescentDriver)
// either sees the count or is woken by the hook.
func (c *Counter) Add() {
	if c.n.Add(1) == 1 {
		if fn := c.hook.Load(); fn != nil {
			(*fn)()
		}
	}
}

// Done counts one registration fewer. Going back to zero needs no call:
// a scheduler asleep in the driver stays there until its next wake-up,
// which costs it nothing but the chance to sleep more cheaply.
func (c *Counter) Done() {
	if c.n.Add(-1) < 0 {
		panic("activity: Done without Add")
	}
}

// Quiescent reports whether nothing is counted.
func (c *Counter) Quiescent() bool { return c.n.Load() == 0 }

// Len returns the current count.
func (c *Counter) Len() int { return int(c.n.Load()) }

// OnActive sets the function Add calls on a transition from zero; nil
// removes it.
func (c *Counter) OnActive(fn func()) {
	if fn == nil {
		c.hook.Store(nil)
		return
	}
	c.hook.Store(&fn)
}
