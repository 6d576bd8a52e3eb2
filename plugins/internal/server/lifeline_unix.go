//go:build unix

package server

import (
	"io"
	"os"
	"strconv"
	"syscall"

	"github.com/weftrt/weft/plugins/internal/wire"
)

// watchHost ends the process when the host is gone. The host passes the
// read end of a pipe whose write end only it holds (wire.HostLifelineEnv
// names the descriptor); when the host ends, however it ends, the kernel
// closes the write end and the read returns end-of-file. This works on
// every Unix system and whatever the plugin's parent is (a wrapper script
// may stand between them); on Linux the host sets a parent-death signal as
// well.
//
// The variable is removed from the environment, and the descriptor made
// close-on-exec, so the plugin's own children see neither.
func watchHost() {
	v, ok := os.LookupEnv(wire.HostLifelineEnv)
	if !ok {
		return // an older host, or the binary run by hand
	}
	_ = os.Unsetenv(wire.HostLifelineEnv)
	log := Logger()
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		log.Warn("ignoring an invalid host lifeline", "env", wire.HostLifelineEnv, "value", v)
		return
	}
	f := os.NewFile(uintptr(fd), "weft-host-lifeline")
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		log.Warn("ignoring a host lifeline that is not a pipe", "env", wire.HostLifelineEnv, "fd", fd, "error", err)
		return
	}
	syscall.CloseOnExec(fd)
	go func() {
		// Nobody writes to the pipe: a read returns only at the end.
		_, err := io.Copy(io.Discard, f)
		log.Warn("the host process is gone; the plugin exits", "error", err)
		os.Exit(0)
	}()
}
