package plugins

import (
	"fmt"
	"log/slog"

	"github.com/weftrt/weft/core"
)

func init() {
	core.Register(core.Module{
		Kind:      core.KindDriver,
		Name:      ModuleName,
		Doc:       "a driver served by a plugin process (hashicorp/go-plugin over gRPC)",
		NewConfig: func() any { return DefaultConfig(core.KindDriver) },
		New: func(config any, _ any) (any, error) {
			c, ok := config.(*Config)
			if !ok {
				return nil, fmt.Errorf("plugins: driver configuration is %T, not *plugins.Config", config)
			}
			return NewDriver(c.DriverOptions(nil))
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
