//go:build unix

package plugins

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"

	"github.com/weftrt/weft/plugins/internal/wire"
)

// lifeline is a pipe whose write end only the host holds, for its whole
// life (a package variable, so no finalizer closes it). Every plugin
// inherits the read end: when the host is gone, however it went (an exit,
// log.Fatal, SIGKILL), the kernel closes the write end, the plugin reads
// end-of-file and exits (package plugins/internal/server does that). The
// write end is close-on-exec, so no other child of the host holds it.
var lifeline struct {
	once sync.Once
	r, w *os.File
}

func lifelineReader() *os.File {
	lifeline.once.Do(func() {
		r, w, err := os.Pipe()
		if err == nil {
			lifeline.r, lifeline.w = r, w
		}
	})
	return lifeline.r
}

// tieToHost makes the plugin the leader of a process group of its own, so
// that killGroup reaches whatever it starts, and makes it end with the
// host: it inherits the lifeline and, on Linux, gets SIGKILL as its
// parent-death signal.
//
// Being in its own group, the plugin does not receive the terminal's
// SIGINT (go-plugin's plugins ignore it anyway) and would be stopped by
// SIGTTIN if it read a terminal on its standard input.
func tieToHost(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{Setpgid: true}
	if hostTies.deathSignal {
		setDeathSignal(attr)
	}
	cmd.SysProcAttr = attr
	if !hostTies.lifeline {
		return
	}
	if r := lifelineReader(); r != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, r)
		fd := 2 + len(cmd.ExtraFiles) // ExtraFiles[i] is the child's fd 3+i
		cmd.Env = append(cmd.Env, wire.HostLifelineEnv+"="+strconv.Itoa(fd))
	}
}

// killGroup kills the process group led by pid.
func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
