// Package plugins runs weft modules out of process: a driver, a timer or a
// scheduler policy served by a separate binary, launched and supervised
// with hashicorp/go-plugin over gRPC, and selected by configuration like
// any built-in module:
//
//	driver:
//	  kind: plugin
//	  path: ./epoll-driver         # plugins/examples/epoll-driver
//	  sha256: <the binary's SHA-256>
//	timer:
//	  kind: plugin
//	  path: ./wheel-timer          # plugins/examples/wheel-timer
//	  sha256: <digest>
//	scheduler:
//	  kind: plugin
//	  path: ./priority-policy      # plugins/examples/priority-policy
//	  sha256: <digest>
//
// Importing the package registers the module "plugin" for the kinds
// driver, timer and scheduler (see Config for its keys). Third parties
// write plugin binaries with package plugins/sdk: sdk.ServeDriver,
// sdk.ServeTimer or sdk.ServeSchedulerPolicy is the whole main function.
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
// # A plugin's life
//
// A plugin never outlives its host. The host passes every plugin the read
// end of a pipe whose write end only it holds; when the host is gone,
// however it went (an exit, log.Fatal, SIGTERM, SIGKILL), the plugin
// reads end-of-file and exits. This works on every Unix system, whatever
// stands between the two (a wrapper script). On Linux the plugin also has
// SIGKILL as its parent-death signal; as that signal fires when the
// thread that forked ends, the host forks on a fresh goroutine, whose
// thread the Go runtime never ends.
//
// Each plugin leads a process group of its own. Starting or ending a
// plugin waits, through go-plugin, for its standard output and error to
// close, which a child of the plugin holding them (a script that runs a
// command without exec) would delay for the child's whole life: when the
// wait outlasts a grace (a second after a failed start, five seconds
// after a graceful stop) the host kills the group, so start_timeout and
// Close hold whatever the plugin's children do. The host signals only the
// process it started, never the pid a plugin reports about itself.
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
// Both sides decode each other's frames as untrusted bytes: no length or
// count is believed beyond the bytes that follow it, and a frame that does
// not parse is an error saying what was wrong and where. It ends the
// session: the operations pending on it fail with an error naming the
// plugin, and the process is ended and restarted per the restart policy
// (a timer fires from the host's table meanwhile, a scheduler runs FIFO).
// The plugin's own description (its kind, name, protocol and pid) is
// checked the same way during the handshake.
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
// # Timer plugins
//
// See Timer. The host keeps the authoritative table of armed entries and
// the plugin keeps them in its own structure (the example serves
// timers/wheel). Inserts and cancels are appended to the session's
// outgoing frame and travel in a batch with the next Fire that needs the
// plugin; Cancel and Len answer from the host's table.
//
// The host's clock is the only clock. The plugin builds its timer on a
// mirror clock that the host moves forward: a session starts with the
// host's current instant, and each Fire request carries the instant to
// fire at; the plugin fires what is due at it and answers with the ids it
// expired and its next deadline. Expirations are applied on the host: the
// entries are marked fired and their wakers woken on the goroutine that
// called Fire, so wakers may re-enter the timer. The host caches a lower
// bound of the next deadline (the plugin's latest answer, lowered by every
// deadline armed since its request), so NextDeadline, parking and a Fire
// before the deadline need no call at all. Because of that cache a virtual
// clock that auto-advances may stop at the deadline of a cancelled entry
// once, firing nothing, before it reaches the next real one.
//
// Several timers may share one process (StartTimerPlugin, one session
// each); the supervisor watches the process through go-plugin's gRPC
// health service. While no process serves a timer, Fire fires due entries
// from the host's table at their exact deadlines, and a restarted process
// receives every armed entry again: a crash loses no timer. core.Timer has
// no Close; Timer implements io.Closer for the runtime that owns it.
//
// The timer conformance suite (conformance.Timer) and the time API
// suite (conformance.TimingRuntime) pass against the example out of
// process, every behaviour of both; the only difference from the wheel in
// process is a round trip per Fire that fires something. The module's
// tests skip one behaviour by default, HoursOfVirtualTimePassWithoutWaiting:
// it is 46,000 sequential round trips, whose wall time on a loaded machine
// can cross the suite's fixed 30 s watchdog (WEFT_PLUGINS_HOURS=1 runs it).
//
// # Scheduler policy plugins
//
// See Scheduler: the module "plugin" of kind scheduler is the
// current-thread scheduler with its run-order hook (currentthread.Policy)
// served by a policy plugin; a policy written in Go for one program needs
// no plugin and implements currentthread.Policy itself. The host keeps the
// tasks; the policy (package policy)
// receives batches of events (Spawned with the task's priority and name,
// Woken, Polled, Completed) and answers each with the ids of the tasks to
// run next. A task's priority comes from SpawnWith, which hands it to the
// scheduler during the spawn; plain core.Spawn gives priority 0. The
// scheduler waits for an answer only when it has a choice (more than one
// runnable task) and something changed since its last request, and at
// most DecisionTimeout: a slow or crashed policy is bypassed and tasks run
// in FIFO order until it catches up or is restarted, when it first
// receives the runnable tasks again. The scheduler conformance suite
// passes against the example priority policy out of process.
//
// # Graceful shutdown
//
// Closing a module ends its session (the plugin drops its pending
// operations and closes its driver; a timer or policy session simply
// ends), then asks go-plugin to stop the process, which is killed if it
// has not exited two seconds later. A scheduler closes its policy once its
// Shutdown has stopped running tasks; a timer closes its plugin in Close.
package plugins
