package plugins_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/plugins"
)

// procStart returns the start time of process pid (field 22 of
// /proc/pid/stat) and its state, or ok false when no such process exists.
func procStart(pid int) (start, state string, ok bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", "", false
	}
	// The command name, in parentheses, may hold spaces: the fields
	// after it are "state ppid ... starttime" (fields 3 to 22).
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", "", false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return "", "", false
	}
	return f[19], f[0], true
}

// watched is a process the test did not start (a plugin of a host, a
// plugin's child), identified by its pid and start time so that a reused
// pid is not mistaken for it.
type watched struct {
	pid   int
	start string
}

func watch(t *testing.T, pid int) watched {
	t.Helper()
	start, _, ok := procStart(pid)
	require.True(t, ok, "process %d is not running", pid)
	w := watched{pid, start}
	t.Cleanup(func() {
		if w.alive() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return w
}

// alive reports whether the process runs (a zombie has ended).
func (w watched) alive() bool {
	start, state, ok := procStart(w.pid)
	return ok && start == w.start && state != "Z" && state != "X"
}

// requireEnds waits, at most liveness, for the process to end.
func (w watched) requireEnds(t *testing.T, what string) {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for w.alive() {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running %v later", what, w.pid, liveness)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startHost runs the test binary as a host (see runHost) with the given
// ties and returns it, its standard input, and its plugin.
func startHost(t *testing.T, ties string) (*exec.Cmd, io.WriteCloser, watched) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), hostEnv+"="+ties, hostPluginEnv+"="+epollBin)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	cmd.WaitDelay = liveness
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the host printed no plugin pid (%v); its standard error: %s", err, stderr)
	}
	pidText, ok := strings.CutPrefix(strings.TrimSpace(line), "plugin ")
	require.True(t, ok, "the host printed %q", line)
	pid, err := strconv.Atoi(pidText)
	require.NoError(t, err)
	return cmd, stdin, watch(t, pid)
}

// A host that ends, however it ends, takes its plugins with it: each of
// the lifeline pipe and the parent-death signal suffices on its own.
func TestAPluginEndsWithItsHost(t *testing.T) {
	ends := []struct {
		name string
		end  func(cmd *exec.Cmd, stdin io.Writer) error
	}{
		{"SIGKILL", func(cmd *exec.Cmd, _ io.Writer) error { return cmd.Process.Signal(syscall.SIGKILL) }},
		{"SIGTERM", func(cmd *exec.Cmd, _ io.Writer) error { return cmd.Process.Signal(syscall.SIGTERM) }},
		{"log.Fatal", func(_ *exec.Cmd, stdin io.Writer) error {
			_, err := io.WriteString(stdin, "fatal\n")
			return err
		}},
		{"os.Exit", func(_ *exec.Cmd, stdin io.Writer) error {
			_, err := io.WriteString(stdin, "exit\n")
			return err
		}},
	}
	for _, ties := range []string{"both", "lifeline", "deathsignal"} {
		for _, e := range ends {
			t.Run(ties+"/"+e.name, func(t *testing.T) {
				cmd, stdin, plugin := startHost(t, ties)
				require.True(t, plugin.alive())
				require.NoError(t, e.end(cmd, stdin))
				err := cmd.Wait()
				var ee *exec.ExitError
				require.True(t, errors.As(err, &ee), "the host ended with %v", err)
				plugin.requireEnds(t, "the plugin of a host that ended through "+e.name)
			})
		}
	}
}

// writeScript writes an executable shell script.
func writeScript(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plugin.sh")
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755))
	return path
}

// readPID waits for the script to write its child's pid to path.
func readPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(liveness)
	for {
		b, err := os.ReadFile(path)
		if err == nil && bytes.HasSuffix(b, []byte("\n")) {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			require.NoError(t, err)
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the script wrote no pid to %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A plugin that never completes the handshake while a child of its own
// holds its standard output and error open (a script running a command
// without exec) fails the start at the start timeout; the child is
// killed with it.
func TestAStartTimeoutHoldsWhenThePluginsChildKeepsItsPipes(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := writeScript(t, "sleep 300 &\necho $! >\"$1\"\nwait\n")
	var err error
	returnsWithin(t, "starting the plugin", func() {
		_, err = plugins.NewDriver(plugins.DriverOptions{Launch: plugins.LaunchConfig{
			Path: script, InsecureSkipChecksum: true, Args: []string{pidFile},
			StartTimeout: 500 * time.Millisecond,
		}})
	})
	requireErrorText(t, err, plugins.ErrHandshake, "did not complete the handshake in time")
	child := watch(t, readPID(t, pidFile))
	child.requireEnds(t, "the child of a plugin that failed to start")
}

// Closing a plugin whose child still holds its pipes after the plugin
// exited returns, and the child is killed.
func TestClosingAPluginWhoseChildKeepsItsPipesReturns(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	script := writeScript(t, "sleep 300 &\necho $! >\"$1\"\nexec \"$2\"\n")
	d, err := plugins.NewDriver(plugins.DriverOptions{Launch: plugins.LaunchConfig{
		Path: script, InsecureSkipChecksum: true, Args: []string{pidFile, epollBin},
	}})
	require.NoError(t, err)
	child := watch(t, readPID(t, pidFile))
	returnsWithin(t, "closing the driver", func() { require.NoError(t, d.Close()) })
	child.requireEnds(t, "the child of a closed plugin")
}

// lockedBuffer is a bytes.Buffer that os/exec's copying goroutine and the
// test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
