package plugins

import (
	"fmt"
	"log/slog"

	"github.com/weftrt/weft/core"
)

// defaults returns the defaults function of a plugin module of kind k,
// for the typed registration.
func defaults(k core.Kind) func() Config {
	return func() Config { return *DefaultConfig(k) }
}

// The plugin modules have no default rank: a runtime uses one only when
// its section's kind names it.
func init() {
	core.RegisterTimer(ModuleName, "a timer served by a plugin process (hashicorp/go-plugin over gRPC)",
		defaults(core.KindTimer),
		func(c Config, p core.TimerParams) (*Timer, error) {
			if p.Clock == nil {
				return nil, fmt.Errorf("plugins: timer %q needs core.TimerParams with a clock", ModuleName)
			}
			return NewTimer(c.TimerOptions(p.Log), p.Clock)
		})
	core.RegisterScheduler(ModuleName,
		"a single-threaded scheduler whose run order a policy plugin decides (hashicorp/go-plugin over gRPC)",
		defaults(core.KindScheduler),
		func(c Config, p core.SchedulerParams) (*Scheduler, error) {
			return NewScheduler(c.SchedulerOptions(p.Log), p)
		})
	core.RegisterDriver(ModuleName, "a driver served by a plugin process (hashicorp/go-plugin over gRPC)",
		defaults(core.KindDriver),
		func(c Config, p core.DriverParams) (*Driver, error) { return NewDriver(c.DriverOptions(p.Log)) })
}

// DriverOptions returns the options of a driver plugin configured by c,
// logging to log (slog.Default() when nil).
func (c *Config) DriverOptions(log *slog.Logger) DriverOptions {
	return DriverOptions{
		Launch:           c.launchConfig(log),
		Restart:          c.restartPolicy(),
		MaxInFlight:      c.MaxInFlight,
		MaxInFlightBytes: c.MaxInFlightBytes,
		WriteBehind:      c.WriteBehind,
	}
}

// TimerOptions returns the options of a timer plugin configured by c,
// logging to log (slog.Default() when nil).
func (c *Config) TimerOptions(log *slog.Logger) TimerOptions {
	return TimerOptions{
		Launch:      c.launchConfig(log),
		Restart:     c.restartPolicy(),
		FireTimeout: c.FireTimeout,
	}
}

// SchedulerOptions returns the options of a scheduler policy plugin
// configured by c, logging to log (slog.Default() when nil).
func (c *Config) SchedulerOptions(log *slog.Logger) SchedulerOptions {
	return SchedulerOptions{
		Launch:          c.launchConfig(log),
		Restart:         c.restartPolicy(),
		DecisionTimeout: c.DecisionTimeout,
		MaxDecision:     c.MaxDecision,
		EventInterval:   c.EventInterval,
	}
}
