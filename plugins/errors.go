package plugins

import (
	"errors"
	"fmt"
	"net"
)

// ErrPluginExited is matched (errors.Is) by the error of every operation
// that was pending, or issued on a handle of the process, when a plugin
// process exited: it crashed, was killed, or ended its session. Such errors
// match net.ErrClosed too, since the process took its sockets with it.
var ErrPluginExited = errors.New("the plugin process exited")

// ErrPluginUnavailable is matched by the error of an operation issued
// while no plugin process serves the module: between a crash and the
// restart, or after the restart policy gave up.
var ErrPluginUnavailable = errors.New("the plugin is not running")

// ErrChecksumMismatch is matched by the error of launching a binary whose
// SHA-256 differs from the configured one.
var ErrChecksumMismatch = errors.New("checksum mismatch")

// ErrHandshake is matched by the error of launching a binary that did not
// complete go-plugin's handshake: a wrong magic cookie (not a weft plugin,
// or built for another host), no protocol version in common, or a process
// that exited or printed garbage before it listened.
var ErrHandshake = errors.New("plugin handshake failed")

// ErrWrongKind is matched by the error of launching a plugin that serves
// another kind of module than the one configured.
var ErrWrongKind = errors.New("the plugin serves another kind of module")

// errProtocol is matched by the error that ends a session because the
// plugin sent a frame the host cannot parse; the message says what was
// wrong.
var errProtocol = errors.New("protocol error")

// protocolError wraps a decoding error as errProtocol.
func protocolError(err error) error { return fmt.Errorf("%w: %w", errProtocol, err) }

// Error is the error of anything done through a plugin: it names the
// plugin (the binary's name and path) and wraps the cause.
type Error struct {
	// Plugin names the plugin: its configured name or binary name.
	Plugin string
	// Path is the binary.
	Path string
	// Err is the cause.
	Err error
}

func (e *Error) Error() string {
	return fmt.Sprintf("weft: plugin %q (%s): %v", e.Plugin, e.Path, e.Err)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes an error about an exited process match net.ErrClosed.
func (e *Error) Is(target error) bool {
	return target == net.ErrClosed && errors.Is(e.Err, ErrPluginExited)
}
