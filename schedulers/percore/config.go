package percore

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/module"
)

// Name is the scheduler's registered name, the value of scheduler.kind that
// selects it.
const Name = "percore"

// Config is the percore module's configuration subtree (the keys under
// "scheduler" when scheduler.kind is "percore").
type Config struct {
	// Workers is the number of workers, each a goroutine locked to an OS
	// thread of its own with its own driver, run queue and mailbox.
	// Default: runtime.GOMAXPROCS(0) when the configuration is made, at
	// most MaxWorkers. Must be between 1 and MaxWorkers (64).
	Workers int `koanf:"workers"`
	// LockThreads locks each worker's goroutine to an OS thread of its
	// own (runtime.LockOSThread) for the worker's whole life, so its driver
	// is only ever entered from that thread. Default false: Go aborts the
	// process when an iter.Pull coroutine (lib/co coroutine tasks) is
	// resumed on a locked thread other than the one it was created on,
	// and tasks move between workers and are dropped by Shutdown's caller.
	// Enable it only for pools that run no coroutine tasks. Pin implies it.
	LockThreads bool `koanf:"lock_threads"`
	// Pin pins worker i's thread to one CPU (sched_setaffinity): the i-th
	// of CPUs, cycling, or of the CPUs the process may run on when CPUs is
	// empty. Pinning locks the worker to its thread (see LockThreads).
	// Default false. Linux only; elsewhere pin: true is invalid.
	Pin bool `koanf:"pin"`
	// CPUs lists the CPUs pinned workers run on, in worker order, each one
	// the process may run on (its affinity mask when the configuration is
	// validated). Only with pin: true. Default: empty (the process's
	// allowed CPUs).
	CPUs []int `koanf:"cpus"`
	// GlobalQueueInterval is how many ticks a busy worker lets pass
	// between takes from the global queue ahead of its own work, so the
	// global queue progresses however busy a worker is. Default 31. Must
	// be between 1 and MaxInterval.
	GlobalQueueInterval int `koanf:"global_queue_interval"`
	// EventInterval is how many ticks a busy worker lets pass between
	// polls of its driver (with a zero timeout) and the timers, and wakes
	// of the tasks that yielded. Default 61. Must be between 1 and
	// MaxInterval.
	EventInterval int `koanf:"event_interval"`
}

// Defaults of the intervals.
const (
	DefaultGlobalQueueInterval = 31
	DefaultEventInterval       = 61
)

// maxCPU bounds the CPU numbers of cpus: the size of a Linux CPU set.
const maxCPU = 1024

// MaxInterval bounds the intervals: a worker counts ticks in 32 bits.
const MaxInterval = module.MaxTickInterval

// DefaultConfig returns the defaults: one worker per GOMAXPROCS (at most
// 64), threads neither locked nor pinned, global queue interval 31, event interval 61.
func DefaultConfig() Config {
	return Config{
		Workers:             min(runtime.GOMAXPROCS(0), MaxWorkers),
		GlobalQueueInterval: DefaultGlobalQueueInterval,
		EventInterval:       DefaultEventInterval,
	}
}

// locked reports whether workers lock their goroutines to OS threads.
func (c *Config) locked() bool { return c.LockThreads || c.Pin }

// WorkerCount returns the number of workers the configuration asks for.
// The runtime uses it as the sharding hint for its timers.
func (c *Config) WorkerCount() int { return c.Workers }

// Validate reports every invalid key as a *core.ConfigError naming it
// (joined with errors.Join when there are several).
func (c *Config) Validate() error {
	var p module.Problems
	if c.Workers < 1 || c.Workers > MaxWorkers {
		p.Add("workers", "must be between 1 and %d, got %d", MaxWorkers, c.Workers)
	}
	if len(c.CPUs) > 0 && !c.Pin {
		p.Add("cpus", "applies only to pinned workers: set pin: true or leave cpus empty")
	}
	// Pinning is checked against the system here, so that a configuration
	// that validates is one the pool can start with.
	var allowed []int
	if c.Pin {
		var err error
		if allowed, err = allowedCPUs(); err != nil {
			p.Add("pin", "%v", err)
		}
	}
	seen := map[int]bool{}
	for i, cpu := range c.CPUs {
		key := fmt.Sprintf("cpus[%d]", i)
		switch {
		case cpu < 0 || cpu >= maxCPU:
			p.Add(key, "must be between 0 and %d, got %d", maxCPU-1, cpu)
		case seen[cpu]:
			p.Add(key, "CPU %d is listed twice", cpu)
		case c.Pin && allowed != nil && !slices.Contains(allowed, cpu):
			p.Add(key, "CPU %d is not one this process may run on (its CPUs are %s)", cpu, cpuList(allowed))
		}
		seen[cpu] = true
	}
	p.TickInterval("global_queue_interval", c.GlobalQueueInterval)
	p.TickInterval("event_interval", c.EventInterval)
	return p.Err()
}

// cpuList formats increasing CPU numbers as ranges: "0-3, 6".
func cpuList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

func init() {
	core.RegisterScheduler(Name, "thread-per-core scheduler: a driver per worker on a locked OS thread, mailboxes, a shared global queue and stealing", DefaultConfig, New)
}
