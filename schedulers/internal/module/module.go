// Package module is what weft's schedulers share about being a module:
// Problems collects the invalid keys of a configuration as
// *core.ConfigError values, and Check is the first step of every
// scheduler's New. The schedulers register themselves with
// core.RegisterScheduler.
package module

import (
	"errors"
	"fmt"
	"math"

	"github.com/weftrt/weft/core"
)

// Problems collects what is wrong with a configuration, one
// *core.ConfigError per invalid key, in the order found. The zero value
// has no problem.
type Problems struct {
	errs []error
}

// Add records that key is invalid: format and args say why.
func (p *Problems) Add(key, format string, args ...any) {
	p.errs = append(p.errs, &core.ConfigError{Key: key, Problem: fmt.Sprintf(format, args...)})
}

// AtLeast records that key is invalid unless v >= least.
func (p *Problems) AtLeast(key string, v, least int) {
	if v < least {
		p.Add(key, "must be >= %d, got %d", least, v)
	}
}

// MaxTickInterval is the largest interval a scheduler counts in ticks:
// its tick counter has 32 bits and it takes the tick modulo the interval,
// so a larger interval would be zero there.
const MaxTickInterval int64 = math.MaxUint32

// TickInterval records that key is invalid unless 1 <= v <=
// MaxTickInterval.
func (p *Problems) TickInterval(key string, v int) {
	switch {
	case v < 1:
		p.Add(key, "must be >= 1, got %d", v)
	case int64(v) > MaxTickInterval:
		p.Add(key, "must be at most %d (a worker counts ticks in 32 bits), got %d", MaxTickInterval, v)
	}
}

// Err returns every problem joined (errors.Join), or nil.
func (p *Problems) Err() error { return errors.Join(p.errs...) }

// Check is the first step of a scheduler's New: cfg must be valid (its
// Validate's error is returned as it is) and p must carry the runtime's
// task set. name prefixes the error about p.
func Check(name string, cfg interface{ Validate() error }, p core.SchedulerParams) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if p.Tasks == nil {
		return fmt.Errorf("%s: SchedulerParams.Tasks is nil", name)
	}
	return nil
}
