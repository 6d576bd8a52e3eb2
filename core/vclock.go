package core

import (
	"math"
	"sync/atomic"
	"time"
)

// VClock is weft's virtual clock: a [VirtualClock] that starts paused at
// instant 0 and moves only when advanced, so that hours of timeouts,
// retries and intervals run in microseconds and a run is reproducible.
//
// # Auto-advance
//
// With auto-advance on (the default) a scheduler that finds every task
// waiting calls spi.AutoAdvance, which jumps the clock straight to the
// next timer deadline and fires it, instead of sleeping until then. This is
// Tokio's start_paused behaviour. With it off, only [VClock.Advance] and
// [VClock.AdvanceTo] move the clock, typically from a test that steps time
// by hand.
//
// # Concurrency
//
// All methods may be called from any goroutine. The clock is one atomic
// word: Now is a load, and the advancing methods move it forward with a
// compare-and-swap, so concurrent advances never move it backwards and
// never lose a step (two Advance(d) calls move it by 2d).
type VClock struct {
	now  atomic.Int64
	auto atomic.Bool
}

// NewVirtualClock returns a paused virtual clock at instant 0 with
// auto-advance on.
func NewVirtualClock() *VClock {
	c := &VClock{}
	c.auto.Store(true)
	return c
}

// Now returns the clock's current instant.
func (c *VClock) Now() Instant { return Instant(c.now.Load()) }

// Advance moves the clock forward by d. A negative or zero d does nothing;
// the clock saturates at the largest Instant instead of wrapping.
func (c *VClock) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	for {
		cur := c.now.Load()
		next := cur + int64(d)
		if next < cur {
			next = math.MaxInt64
		}
		if c.now.CompareAndSwap(cur, next) {
			return
		}
	}
}

// AdvanceTo moves the clock to i if i is later than now, and does nothing
// otherwise: the clock never goes backwards.
func (c *VClock) AdvanceTo(i Instant) {
	for {
		cur := c.now.Load()
		if int64(i) <= cur || c.now.CompareAndSwap(cur, int64(i)) {
			return
		}
	}
}

// AutoAdvance reports whether an idle scheduler may jump the clock to the
// next deadline. See [VirtualClock].
func (c *VClock) AutoAdvance() bool { return c.auto.Load() }

// SetAutoAdvance turns auto-advance on or off. It may be called at any
// time, for instance to hold the clock still while a test inspects the
// runtime.
func (c *VClock) SetAutoAdvance(on bool) { c.auto.Store(on) }

// VirtualClockConfig is the configuration of the "virtual" clock module.
type VirtualClockConfig struct {
	// AutoAdvance lets a scheduler with every task waiting jump the clock
	// to the next timer deadline. Default true.
	AutoAdvance bool `koanf:"auto_advance"`
}

func init() {
	RegisterClock("virtual",
		"a paused virtual clock that moves when advanced or, when every task waits, to the next deadline",
		func() VirtualClockConfig { return VirtualClockConfig{AutoAdvance: true} },
		func(cfg VirtualClockConfig, _ ClockParams) (Clock, error) {
			c := NewVirtualClock()
			c.SetAutoAdvance(cfg.AutoAdvance)
			return c, nil
		})
}
