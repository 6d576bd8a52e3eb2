// Package sdk is what a third party imports to ship a weft module as its
// own binary. One call from main serves it:
//
//	func main() {
//		sdk.ServeDriver("epoll", func() (core.Driver, error) { return epoll.New(1024) })
//	}
//
// The binary is then selected by configuration on the host:
//
//	driver: {kind: plugin, path: ./epoll-driver, sha256: <digest>}
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

// Logger returns the plugin's logger: its records are written to the
// process's standard error in hclog's JSON format, which the host parses
// and forwards to its log/slog logger with the level and attributes kept.
// The level is the lowest the host keeps.
func Logger() *slog.Logger { return server.Logger() }
