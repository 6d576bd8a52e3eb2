package main_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// The program as a user runs it: it echoes, and ctrl-c (SIGINT) stops it
// with exit status 0 once the open connection is done.
func TestCtrlCStopsTheServerGracefully(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "weft-echo")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	cmd := exec.Command(bin, "-addr", "127.0.0.1:0", "-grace", "1h")
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer cmd.Process.Kill()
	log := bufio.NewReader(stderr)
	first, err := log.ReadString('\n')
	require.NoError(t, err)
	fields := strings.Fields(first) // weft-echo: listening on ADDR (pid N)
	require.GreaterOrEqual(t, len(fields), 4, first)
	addr := fields[3]

	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	in := bufio.NewReader(conn)
	_, err = conn.Write([]byte("hello\n"))
	require.NoError(t, err)
	got, err := in.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "hello\n", got)

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	_, err = conn.Write([]byte("still here\n"))
	require.NoError(t, err)
	got, err = in.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "still here\n", got, "an open connection is served after ctrl-c")
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())

	rest, _ := log.ReadString(0)
	require.NoError(t, cmd.Wait(), "stderr: %s", rest)
	require.Contains(t, rest, "weft-echo: stopped")
}
