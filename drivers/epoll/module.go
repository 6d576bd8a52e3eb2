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
	core.Register(core.Module{
		Kind: core.KindDriver,
		Name: "epoll",
		Doc:  "Linux epoll readiness driver: edge-triggered, several waiters per direction",
		// Off Linux, checking a configuration that names the driver
		// reports ErrUnsupported at driver.kind.
		Available: available,
		New: func(_ any, params any) (any, error) {
			events := DefaultEvents
			if p, ok := params.(*core.DriverParams); ok && p != nil && p.Events > 0 {
				events = p.Events
			}
			return newDriver(events)
		},
	})
}
