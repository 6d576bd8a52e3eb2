package workstealing

import (
	"runtime"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/module"
)

// Name is the scheduler's registered name, the value of scheduler.kind that
// selects it.
const Name = "workstealing"

// Config is the workstealing module's configuration subtree (the keys under
// "scheduler" when scheduler.kind is "workstealing").
type Config struct {
	// Workers is the number of workers, each a goroutine with its own run
	// queue. Default: runtime.GOMAXPROCS(0) when the configuration is
	// made, at most MaxWorkers(). Must be between 1 and MaxWorkers().
	Workers int `koanf:"workers"`
	// GlobalQueueInterval is how many ticks a busy worker lets pass between
	// looks at the global queue ahead of its own. 0 (the default) tunes it
	// per worker from the measured poll time, so that a look happens about
	// every 200 µs of work; a value from 1 to MaxInterval fixes it.
	GlobalQueueInterval int `koanf:"global_queue_interval"`
	// EventInterval is how many ticks a busy worker lets pass between polls
	// of the driver and timers (with a zero timeout) and wakes of deferred
	// tasks. Default 61. Must be between 1 and MaxInterval.
	EventInterval int `koanf:"event_interval"`
	// LIFOSlot lets a task woken or spawned by the running task run next,
	// ahead of the run queue. Default true.
	LIFOSlot bool `koanf:"lifo_slot"`
	// MaxLIFOPolls is how many tasks in a row may run from the LIFO slot
	// before it is bypassed until the next tick. Default 3. Must be >= 1.
	MaxLIFOPolls int `koanf:"max_lifo_polls"`
}

// Defaults of the configuration keys other than workers.
const (
	DefaultEventInterval = 61
	DefaultMaxLIFOPolls  = 3
)

// WorkersPerCPU bounds the pool: at most this many workers per CPU the
// machine has. Workers beyond the CPUs only take turns on them, and every
// idle worker's search for work visits every other worker, so the cost of
// starting and idling a pool grows with the square of its size: on two
// CPUs 32768 workers take 8 s to start, 10^5 over a minute, and 10^9 run
// out of memory.
const WorkersPerCPU = 64

// MaxWorkers returns the largest valid worker count on this machine:
// WorkersPerCPU times runtime.NumCPU().
func MaxWorkers() int { return WorkersPerCPU * runtime.NumCPU() }

// MaxInterval bounds the fixed intervals: a worker counts ticks in 32
// bits.
const MaxInterval = module.MaxTickInterval

// DefaultConfig returns the defaults: one worker per GOMAXPROCS (at most
// MaxWorkers()), a self-tuned global queue interval, event interval 61,
// the LIFO slot on with at most 3 polls in a row.
func DefaultConfig() Config {
	return Config{
		Workers:       min(runtime.GOMAXPROCS(0), MaxWorkers()),
		EventInterval: DefaultEventInterval,
		LIFOSlot:      true,
		MaxLIFOPolls:  DefaultMaxLIFOPolls,
	}
}

// WorkerCount returns the number of workers the configuration asks for.
// The runtime uses it as the sharding hint for its timers.
func (c *Config) WorkerCount() int { return c.Workers }

// Validate reports every invalid key as a *core.ConfigError naming it
// (joined with errors.Join when there are several).
func (c *Config) Validate() error {
	var p module.Problems
	if c.Workers < 1 {
		p.Add("workers", "must be >= 1, got %d", c.Workers)
	} else if limit := MaxWorkers(); c.Workers > limit {
		p.Add("workers", "must be at most %d (%d per CPU, and this machine has %d; more workers only take turns "+
			"on the CPUs, at a cost that grows with the square of their number), got %d",
			limit, WorkersPerCPU, runtime.NumCPU(), c.Workers)
	}
	if c.GlobalQueueInterval < 0 {
		p.Add("global_queue_interval", "must be 0 (self-tuned) or >= 1, got %d", c.GlobalQueueInterval)
	} else if int64(c.GlobalQueueInterval) > MaxInterval {
		p.Add("global_queue_interval", "must be at most %d (a worker counts ticks in 32 bits), got %d", MaxInterval, c.GlobalQueueInterval)
	}
	p.TickInterval("event_interval", c.EventInterval)
	p.AtLeast("max_lifo_polls", c.MaxLIFOPolls, 1)
	return p.Err()
}

func init() {
	core.RegisterScheduler(Name, "multi-threaded work-stealing scheduler: a worker per GOMAXPROCS, run queues with stealing, a LIFO slot and a global queue", DefaultConfig, New,
		// The default scheduler: over currentthread when both are linked.
		core.DefaultRank(20))
}
