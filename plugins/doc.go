// Package plugins runs weft modules out of process: a driver served by a
// separate binary, launched and supervised with hashicorp/go-plugin over
// gRPC, and selected by configuration like any built-in module:
//
//	driver:
//	  kind: plugin
//	  path: ./epoll-driver         # plugins/examples/epoll-driver
//	  sha256: <the binary's SHA-256>
//
// Importing the package registers the module "plugin" of kind driver (see
// Config for its keys). Third parties write plugin binaries with package
// plugins/sdk: sdk.ServeDriver(name, factory) is the whole main function.
//
// # Launch and handshake
//
// A plugin process is started with go-plugin's client, gRPC only
// (AllowedProtocols), with AutoMTLS (each side generates a one-time
// certificate, so only this host can talk to the process), and with the
// binary's SHA-256 checked by go-plugin's SecureConfig before it is
// executed; a digest is required unless insecure_skip_checksum says
// otherwise. The handshake checks the magic cookie and negotiates weft's
// plugin protocol version through go-plugin's VersionedPlugins; the plugin
// then describes itself (kind, module name, protocol) and a plugin of
// another kind is refused. Each failure is an *Error naming the plugin and
// matching ErrChecksumMismatch, ErrHandshake or ErrWrongKind, with the end
// of the plugin's standard error quoted when it explains the failure.
//
// # Logs
//
// go-plugin's diagnostics and the plugin's log records (hclog JSON lines on
// its standard error, which sdk.Logger writes) reach the host's log/slog
// logger through NewHCLogAdapter, level and attributes kept; anything else
// the plugin prints is forwarded line by line.
//
// # Services and frames
//
// The gRPC services are declared by hand (grpc.ServiceDesc; the build has
// no protoc) and carry google.protobuf.BytesValue messages whose bytes are
// weft's own compact binary frames: batches of varint-encoded records. An
// existing registered message type keeps gRPC's default codec for every
// service on the connection, including go-plugin's own broker, controller,
// stdio and health services, so no codec is forced on anyone; our records
// avoid a generated type per operation and protobuf's per-field overhead,
// and a whole batch of operations is one message. The price is a protocol
// version of our own, which the handshake negotiates.
//
// # Driver plugins
//
// See Driver: one bidirectional stream per driver; operations and
// completions in batches both ways; each buffer copied once each way in
// the host; a bounded window of operations and bytes in flight, plus a
// per-handle bound on write-behind bytes, is the back-pressure on a plugin
// that falls behind; crashes fail every pending operation with an error
// naming the plugin, and the process is restarted with backoff.
//
// # Graceful shutdown
//
// Closing a module ends its session (the plugin drops its pending
// operations and closes its driver), then asks go-plugin to stop the
// process, which is killed if it has not exited two seconds later.
package plugins
