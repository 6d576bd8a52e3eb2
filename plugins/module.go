package plugins

import (
	"fmt"
	"log/slog"

	"github.com/weftrt/weft/core"
)

func init() {
	core.Register(core.Module{
		Kind:      core.KindTimer,
		Name:      ModuleName,
		Doc:       "a timer served by a plugin process (hashicorp/go-plugin over gRPC)",
		NewConfig: func() any { return DefaultConfig(core.KindTimer) },
		New: func(config any, params any) (any, error) {
			c, ok := config.(*Config)
			if !ok {
				return nil, fmt.Errorf("plugins: timer configuration is %T, not *plugins.Config", config)
			}
			p, ok := params.(*core.TimerParams)
			if !ok || p == nil || p.Clock == nil {
				return nil, fmt.Errorf("plugins: timer %q needs *core.TimerParams with a clock, got %T", ModuleName, params)
			}
			return NewTimer(c.TimerOptions(p.Log), p.Clock)
		},
	})
	core.Register(core.Module{
		Kind:      core.KindScheduler,
		Name:      ModuleName,
		Doc:       "a single-threaded scheduler whose run order a policy plugin decides (hashicorp/go-plugin over gRPC)",
		NewConfig: func() any { return DefaultConfig(core.KindScheduler) },
		New: func(config any, params any) (any, error) {
			c, ok := config.(*Config)
			if !ok {
				return nil, fmt.Errorf("plugins: scheduler configuration is %T, not *plugins.Config", config)
			}
			p, ok := params.(*core.SchedulerParams)
			if !ok || p == nil {
				return nil, fmt.Errorf("plugins: scheduler %q needs *core.SchedulerParams, got %T", ModuleName, params)
			}
			return NewScheduler(c.SchedulerOptions(p.Log), *p)
		},
	})
	core.Register(core.Module{
		Kind:      core.KindDriver,
		Name:      ModuleName,
		Doc:       "a driver served by a plugin process (hashicorp/go-plugin over gRPC)",
		NewConfig: func() any { return DefaultConfig(core.KindDriver) },
		New: func(config any, params any) (any, error) {
			c, ok := config.(*Config)
			if !ok {
				return nil, fmt.Errorf("plugins: driver configuration is %T, not *plugins.Config", config)
			}
			var log *slog.Logger
			if p, ok := params.(*core.DriverParams); ok && p != nil {
				log = p.Log
			}
			return NewDriver(c.DriverOptions(log))
		},
	})
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
