package wheel

import (
	"fmt"

	"github.com/weftrt/weft/core"
)

// Config is the wheel module's configuration (the "timer" subtree when
// timer.kind is "wheel").
type Config struct {
	// Shards is the number of independent wheels, rounded up to a power of
	// two. Zero, the default, derives it from the runtime's worker count
	// with [ShardsFor].
	Shards int `koanf:"shards"`
}

// Validate reports a shard count outside [0, MaxShards] as a
// *core.ConfigError naming the key.
func (c *Config) Validate() error {
	if c.Shards < 0 || c.Shards > MaxShards {
		return &core.ConfigError{
			Key:     "shards",
			Problem: fmt.Sprintf("must be between 0 (one per worker) and %d, got %d", MaxShards, c.Shards),
		}
	}
	return nil
}

// build is the module's New: it turns a validated Config and the runtime's
// core.TimerParams into a *Wheel.
func build(cfg Config, p core.TimerParams) (*Wheel, error) {
	if p.Clock == nil {
		return nil, fmt.Errorf("weft: timer %q needs core.TimerParams with a clock", "wheel")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	shards := cfg.Shards
	if shards == 0 {
		shards = ShardsFor(p.Shards)
	}
	return New(p.Clock, shards), nil
}

func init() {
	core.RegisterTimer("wheel",
		"hierarchical timing wheel: 6 levels x 64 slots, 1 ms resolution, O(1) arm and cancel, sharded",
		func() Config { return Config{} }, build,
		// The default timer: over heap when both are linked.
		core.DefaultRank(20))
}
