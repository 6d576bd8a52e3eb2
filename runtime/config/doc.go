// Package config loads, checks and describes the composition of a weft
// runtime: which scheduler, driver, timer and clock it is built from, how
// each of them is configured, and the runtime's own settings.
//
// # Layers
//
// A [Composition] is built from four layers, each overriding the ones
// before it; knadh/koanf merges them:
//
//	defaults     DefaultRuntime, each section's DefaultKind (the linked
//	             module of highest rank), and the module's NewConfig,
//	             which its section is decoded over
//	   ↓ file    optional; YAML (.yaml, .yml), TOML (.toml) or JSON (.json)
//	   ↓ env     variables prefixed WEFT_
//	   ↓ Go      LoadOptions.Overrides: dotted keys set by the builder
//
// The merged tree is then decoded strictly into typed structs and validated.
// The result is a fresh, fully validated snapshot; nothing in it changes
// after Load returns.
//
// # File shape
//
// The top level has one section for the runtime and one per module kind. A
// module section is flat: the key kind names the module, the other keys are
// that module's own options.
//
//	runtime:
//	  name: weft
//	  unhandled_panic: log         # or ignore, shutdown_runtime, crash
//	  shutdown_timeout: 10s
//	  event_buffer: 1024
//	  blocking: {max_threads: 512, keep_alive: 10s}
//	driver:    {kind: none}
//	clock:     {kind: real}
//	timer:     {kind: none}
//	scheduler: {kind: currentthread, workers: 2}
//
// "none" disables the driver or the timer; a runtime always has a clock and
// a scheduler. An unknown section, key or kind is an error.
//
// # Environment
//
// Every key has one environment variable: WEFT_ followed by the dotted key
// upper-cased with dots turned into underscores (scheduler.workers is
// WEFT_SCHEDULER_WORKERS, runtime.blocking.max_threads is
// WEFT_RUNTIME_BLOCKING_MAX_THREADS). Because keys contain underscores, a
// variable is matched against the names of the keys that exist rather than
// split on underscores; the WEFT_<SECTION>_KIND variables are resolved first
// so the chosen module's keys are known. A list takes a comma-separated
// value.
//
// A WEFT_ variable that names no key is not an error, since another
// program or another version of weft may own it: loading ignores it and
// logs a warning naming the closest valid variable (on LoadOptions.Log,
// slog.Default() when that is nil). When a WEFT_<SECTION>_KIND variable
// chose a section's module, every other problem in that section says so,
// as its keys were checked against that module rather than the file's.
//
// # Decoding
//
// Values are decoded by the struct tags `koanf:"key"` of the target struct;
// fields without a tag (or tagged "-") are not configurable. Supported
// field types are strings, booleans, every integer kind, floats,
// time.Duration, slices of these, nested structs (a table of keys) and any
// type whose pointer implements encoding.TextUnmarshaler. A string holding a
// value of the field's type is accepted ("4" for an integer, "true" for a
// boolean, "10s" for a duration), because environment variables are
// strings. Otherwise the only conversions are between numbers: an integer
// is a valid float, and a float with no fractional part (JSON has no
// integers) a valid integer, range-checked for the field. A number is never
// a string. A duration is a Go duration string with its unit ("250ms",
// "10s", "1h30m"); a bare number is an error that shows the units, except
// 0, which is zero in every unit. A null value leaves the default.
//
// # Checks
//
// A module's Validate method checks its own keys, including the bounds of
// what the machine can serve (a worker count, an event buffer, the CPUs a
// worker may be pinned to), and a module that cannot exist on this system
// (core.Module.Available: kqueue on Linux) is a problem at its section's
// kind. So a configuration that loads is one the runtime can be built
// from, and `weft config check` agrees with rt.Builder.Build.
//
// # Errors
//
// Loading reports every problem it finds, not only the first: the error is
// an errors.Join of [*core.ConfigError] values, each naming the full dotted
// key, what is wrong, and the valid keys or values when there is a short
// list. A value that came from the environment or the overrides says so. A
// file that cannot be read or parsed stops loading with a [*FileError].
// A module registered wrongly (core.RegistrationErrors) stops every load
// before anything else, with a [*core.RegistrationError] naming it.
package config
