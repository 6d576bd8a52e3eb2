// Package sdk is what a third party imports to ship a weft module as its
// own binary: a driver, a timer or a scheduler policy. One call from main
// serves it:
//
//	func main() {
//		sdk.ServeDriver("epoll", func() (core.Driver, error) { return epoll.New(1024) })
//	}
//
//	func main() {
//		sdk.ServeTimer("wheel", func(c core.Clock) (core.Timer, error) { return wheel.New(c, 1), nil })
//	}
//
//	func main() {
//		sdk.ServeSchedulerPolicy("priority", func() policy.Policy { return policy.NewPriority() })
//	}
//
// The binary is then selected by configuration on the host:
//
//	driver:    {kind: plugin, path: ./epoll-driver, sha256: <digest>}
//	timer:     {kind: plugin, path: ./wheel-timer, sha256: <digest>}
//	scheduler: {kind: plugin, path: ./priority-policy, sha256: <digest>}
//
// # What the SDK does
//
// It answers hashicorp/go-plugin's handshake (the magic cookie, the
// negotiation of weft's plugin protocol version, AutoMTLS when the host
// asks for it, which weft hosts always do), serves gRPC, and runs each
// session the host opens: for a driver, a fresh driver from the factory,
// owned by a private poll loop that executes the host's operations in
// batches and streams their completions back. The plugin process owns
// its sockets and files; the host sees identifiers. When the host ends a
// session the loop drops every pending operation and closes the driver.
// For a timer, a fresh timer on a mirror of the host's clock, to which the
// session applies the host's batched inserts and cancels and whose
// expirations it returns when the host fires. For a scheduler policy, a
// fresh policy that receives the host's task events in batches and
// answers each batch with the order to run tasks in.
//
// # Logging
//
// Logger returns a *slog.Logger whose records reach the host's log/slog
// logger with their level and attributes. Anything else the plugin writes
// to standard output or standard error is forwarded to the host's logger
// line by line.
package sdk

import (
	"log/slog"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/server"
	"github.com/weftrt/weft/plugins/internal/wire"
	"github.com/weftrt/weft/plugins/policy"
)

// ServeDriver serves a driver plugin named name and does not return until
// the host ends the plugin. newDriver is called once per session, that is
// once per host driver (a thread-per-core host opens one per worker); the
// driver it returns is closed when the session ends. Optional driver
// capabilities (core.DatagramIO) are discovered with a type assertion;
// vectored I/O is served by plain reads and writes.
func ServeDriver(name string, newDriver func() (core.Driver, error)) {
	ds := &server.DriverService{New: newDriver, Log: Logger()}
	server.Serve(server.Options{
		Info:     wire.Info{Kind: wire.KindDriver, Name: name, Capabilities: []string{"vectored", "datagram"}},
		Register: ds.Register,
	})
}

// ServeTimer serves a timer plugin named name and does not return until the
// host ends the plugin. newTimer is called once per session (once per host
// timer) with the session's clock: a mirror of the host's clock, moved
// forward by the instants the host sends, which the timer may read as it
// would its runtime's clock (a wheel starts at its current instant). The
// timer is closed when the session ends if it implements io.Closer. A
// Resolution() time.Duration method, if the timer has one, is reported to
// the host, which reports it in turn.
func ServeTimer(name string, newTimer func(clock core.Clock) (core.Timer, error)) {
	ts := &server.TimerService{New: newTimer, Log: Logger()}
	server.Serve(server.Options{
		Info:     wire.Info{Kind: wire.KindTimer, Name: name},
		Register: ts.Register,
	})
}

// ServeSchedulerPolicy serves a scheduler policy plugin named name and does
// not return until the host ends the plugin. newPolicy is called once per
// session (once per host scheduler), so a policy keeps no state across
// the schedulers it serves; see package policy for the events and
// decisions.
func ServeSchedulerPolicy(name string, newPolicy func() policy.Policy) {
	ps := &server.PolicyService{New: newPolicy, Log: Logger()}
	server.Serve(server.Options{
		Info:     wire.Info{Kind: wire.KindScheduler, Name: name},
		Register: ps.Register,
	})
}

// Logger returns the plugin's logger: its records are written to the
// process's standard error in hclog's JSON format, which the host parses
// and forwards to its log/slog logger with the level and attributes kept.
// The level is the lowest the host keeps.
func Logger() *slog.Logger { return server.Logger() }
