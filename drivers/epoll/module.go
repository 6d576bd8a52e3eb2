package epoll

import (
	"errors"

	"github.com/weftrt/weft/core"
)

// DefaultEvents is the size of the event buffer when the runtime does not
// say (runtime.event_buffer, 1024 by default, as in Tokio).
const DefaultEvents = 1024

// ErrUnsupported is returned when the driver is built on a system without
// epoll (anything but Linux).
var ErrUnsupported = errors.New("epoll: the epoll driver needs Linux")

func init() {
	core.RegisterDriver("epoll", "Linux epoll readiness driver: edge-triggered, several waiters per direction", nil,
		func(_ struct{}, p core.DriverParams) (core.Driver, error) {
			events := DefaultEvents
			if p.Events > 0 {
				events = p.Events
			}
			return newDriver(events)
		},
		// Off Linux, checking a configuration that names the driver
		// reports ErrUnsupported at driver.kind.
		core.AvailableWhen(available),
		// The default driver on Linux (elsewhere it is unavailable, and
		// so never the default).
		core.DefaultRank(20))
}
