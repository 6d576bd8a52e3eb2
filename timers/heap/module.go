package heap

import (
	"errors"
	"fmt"

	"github.com/weftrt/weft/core"
)

// Config is the heap module's configuration (the "timer" subtree when
// timer.kind is "heap").
type Config struct {
	// Shards is the number of independent heaps, rounded up to a power of
	// two. Zero, the default, derives it from the runtime's worker count
	// with [ShardsFor].
	Shards int `koanf:"shards"`
	// Arity is the number of children per node: 2, 4, 8 or 16. Default 4.
	Arity int `koanf:"arity"`
}

// Validate reports a shard count outside [0, MaxShards] and an arity that
// is not 2, 4, 8 or 16, each as a *core.ConfigError naming the key (joined
// with errors.Join when there are both).
func (c *Config) Validate() error {
	var errs []error
	if c.Shards < 0 || c.Shards > MaxShards {
		errs = append(errs, &core.ConfigError{
			Key:     "shards",
			Problem: fmt.Sprintf("must be between 0 (one per worker) and %d, got %d", MaxShards, c.Shards),
		})
	}
	if !validArity(c.Arity) {
		errs = append(errs, &core.ConfigError{
			Key:     "arity",
			Problem: fmt.Sprintf("must be a power of two from 2 to 16, got %d", c.Arity),
			Valid:   []string{"2", "4", "8", "16"},
		})
	}
	return errors.Join(errs...)
}

// build is the module's New: it turns a validated Config and the runtime's
// core.TimerParams into a *Heap.
func build(cfg Config, p core.TimerParams) (*Heap, error) {
	if p.Clock == nil {
		return nil, fmt.Errorf("weft: timer %q needs core.TimerParams with a clock", "heap")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	shards := cfg.Shards
	if shards == 0 {
		shards = ShardsFor(p.Shards)
	}
	return New(p.Clock, shards, cfg.Arity), nil
}

func init() {
	core.RegisterTimer("heap",
		"d-ary min-heap timer: full clock precision, O(log n) arm and cancel through a stored index, sharded",
		func() Config { return Config{Arity: DefaultArity} }, build,
		// The default timer when the wheel is not linked.
		core.DefaultRank(10))
}
