package echo_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/tools/internal/echo"
)

// lowFDChildEnv makes the test binary a weft echo server that may hold
// only a few connections at once (see serveWithFewDescriptors).
const lowFDChildEnv = "ECHO_TEST_LOW_FD_SERVER"

// connsAtOnce is how many connections the low-descriptor server can hold.
const connsAtOnce = 4

// serveWithFewDescriptors runs in the child: it listens, prints its
// address, lowers its descriptor limit to what it has open plus
// connsAtOnce, and serves until it fails.
func serveWithFewDescriptors() {
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver("epoll").Timer("wheel").Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, "build:", err)
		os.Exit(1)
	}
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading /proc/self/fd:", err)
		os.Exit(1)
	}
	open := map[int]bool{}
	for _, e := range entries {
		var fd int
		if _, err := fmt.Sscan(e.Name(), &fd); err == nil {
			open[fd] = true
		}
	}
	// New descriptors take the lowest free numbers: the limit is where
	// exactly connsAtOnce numbers below it are free.
	limit, free := uint64(0), 0
	for ; free < connsAtOnce; limit++ {
		if !open[int(limit)] {
			free++
		}
	}
	fmt.Fprintf(os.Stderr, "descriptor limit %d, with %d open\n", limit, len(open))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: limit, Max: limit}); err != nil {
		fmt.Fprintln(os.Stderr, "setrlimit:", err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	serveErr, err := rt.BlockOn(r, echo.Serve(ln, 0))
	fmt.Fprintln(os.Stderr, "serve ended:", errors.Join(serveErr, err))
	os.Exit(1)
}

// lineWatcher collects a child's standard error and reports when a line
// containing a given text has appeared.
type lineWatcher struct {
	mu    sync.Mutex
	lines []string
	seen  chan struct{}
	want  string
	ended chan struct{}
}

func watchLines(r io.Reader, want string) *lineWatcher {
	w := &lineWatcher{seen: make(chan struct{}), want: want, ended: make(chan struct{})}
	go func() {
		defer close(w.ended)
		sc := bufio.NewScanner(r)
		found := false
		for sc.Scan() {
			w.mu.Lock()
			w.lines = append(w.lines, sc.Text())
			w.mu.Unlock()
			if !found && strings.Contains(sc.Text(), want) {
				found = true
				close(w.seen)
			}
		}
	}()
	return w
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.lines, "\n")
}

// wait blocks until the wanted line appears, failing the test if the
// stream ends first or a minute passes (a liveness bound only).
func (w *lineWatcher) wait(t *testing.T) {
	t.Helper()
	select {
	case <-w.seen:
	case <-w.ended:
		t.Fatalf("the output ended without a line containing %q:\n%s", w.want, w)
	case <-time.After(time.Minute):
		t.Fatalf("no line containing %q within a minute:\n%s", w.want, w)
	}
}

// echoOnce sends msg on c, half-closes it and checks that the echo is
// exactly msg.
func echoOnce(t *testing.T, c net.Conn, msg []byte) {
	t.Helper()
	_, err := c.Write(msg)
	require.NoError(t, err)
	require.NoError(t, c.(*net.TCPConn).CloseWrite())
	got, err := io.ReadAll(c)
	require.NoError(t, err)
	assert.Equal(t, msg, got)
}

func TestServeKeepsServingWhenItRunsOutOfDescriptors(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lowFDChildEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	log := watchLines(stderr, "too many open files")
	addr, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err, "the child prints its address; its log:\n%s", log)

	// Three times as many connections as the server can hold: the
	// kernel completes them all, and the server's accepts fail with
	// EMFILE once it holds connsAtOnce of them.
	conns := make([]net.Conn, 3*connsAtOnce)
	for i := range conns {
		conns[i], err = net.Dial("tcp", strings.TrimSpace(addr))
		require.NoError(t, err)
		defer conns[i].Close()
	}
	log.wait(t)

	// Every connection is served: the ones the server holds finish and
	// free their descriptors, and the retried accepts take the rest.
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			echoOnce(t, c, bytes.Repeat([]byte{byte('a' + i)}, 1000+i))
		}()
	}
	wg.Wait()
	assert.Contains(t, log.String(), "retrying", "the server says it retries:\n%s", log)
}

func TestServeListensAgainWhenItsHandleIsLostUnderIt(t *testing.T) {
	logs, w := io.Pipe()
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(w, nil)))
	t.Cleanup(func() { slog.SetDefault(prev); w.Close() })
	log := watchLines(logs, "listening again")

	r, err := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Driver("epoll").Timer("wheel").Build()
	require.NoError(t, err)
	defer r.ShutdownBackground()
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	require.NoError(t, err)
	addr := ln.Addr().String()
	go rt.BlockOn(r, echo.Serve(ln, 0))

	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	echoOnce(t, c, []byte("before"))
	c.Close()

	// The driver closes the listener's handle behind the program's back,
	// as a restarted out-of-process driver does to every old handle.
	_, err = wnet.OnRuntime(r, func(cx *core.Context) (struct{}, error) {
		return struct{}{}, cx.Worker().Driver().CloseHandle(ln.Handle())
	})
	require.NoError(t, err)
	log.wait(t)

	c, err = net.Dial("tcp", addr)
	require.NoError(t, err, "the server listens on the same address again")
	echoOnce(t, c, []byte("after"))
	c.Close()
}
