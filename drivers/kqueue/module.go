package kqueue

import (
	"errors"

	"github.com/weftrt/weft/core"
)

// DefaultEvents is the size of the event buffer when the runtime does not
// say (runtime.event_buffer, 1024 by default, as in Tokio).
const DefaultEvents = 1024

// ErrUnsupported is returned when the driver is built on a system without
// kqueue (anything but darwin, freebsd, netbsd and openbsd).
var ErrUnsupported = errors.New("kqueue: the kqueue driver needs darwin, freebsd, netbsd or openbsd")

func init() {
	core.RegisterDriver("kqueue", "BSD/macOS kqueue readiness driver: edge-triggered (EV_CLEAR), several waiters per direction", nil,
		func(_ struct{}, p core.DriverParams) (core.Driver, error) {
			events := DefaultEvents
			if p.Events > 0 {
				events = p.Events
			}
			return newDriverModule(events)
		},
		// Elsewhere, checking a configuration that names the driver
		// reports ErrUnsupported at driver.kind.
		core.AvailableWhen(available),
		// The default driver on macOS and the BSDs (elsewhere it is
		// unavailable, and so never the default).
		core.DefaultRank(20))
}
