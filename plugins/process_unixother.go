//go:build unix && !linux

package plugins

import "syscall"

// setDeathSignal does nothing: only Linux has a parent-death signal. The
// lifeline ends the plugin with its host.
func setDeathSignal(*syscall.SysProcAttr) {}
