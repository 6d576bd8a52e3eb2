package plugins

import "syscall"

// setDeathSignal asks the kernel to kill the plugin when the thread that
// forked it ends (see launch for why that thread lives as long as the
// host). Go's fork checks, after setting it, that the parent did not end
// in between.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
