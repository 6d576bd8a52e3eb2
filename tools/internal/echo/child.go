package echo

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"

	// The built-in modules, so a child server can be composed from any of
	// them.
	_ "github.com/weftrt/weft"
)

// Impl names a server implementation.
type Impl string

// The server implementations.
const (
	// Weft is Serve on a weft runtime composed from Server.Settings.
	Weft Impl = "weft"
	// Go is the same echo loop on Go's net: a goroutine per connection
	// reading into a buffer of the same size and writing it back.
	Go Impl = "go"
	// GoCopy is the idiomatic Go echo, io.Copy(conn, conn), which Go's net
	// turns into splice(2) between the two sockets.
	GoCopy Impl = "go-copy"
)

// Server says how to run a child server.
type Server struct {
	// Settings are weft configuration keys for the Weft server, applied
	// with rt.Builder.Set over the defaults of DefaultSettings. Ignored by
	// the Go servers.
	// Values are strings as a configuration file writes them ("10s"),
	// numbers, booleans, or lists of strings: what survives JSON.
	Settings map[string]any
	// BufferSize is each connection's copy buffer (DefaultBufferSize if
	// zero).
	BufferSize int
	// Executable is the program to start as the child; the running
	// executable if empty. It must call ServeChildIfRequested first.
	Executable string
	// CPUProfile, if set, is a file the child writes a CPU profile of the
	// measured interval to (runtime/pprof).
	CPUProfile string
	// Addr, if set, is the address of a server already running (weft-echo,
	// say): no child is started, and the server's CPU time is not
	// measured (reported as zero).
	Addr string
}

// DefaultSettings is the composition of the Weft server unless
// Server.Settings says otherwise.
func DefaultSettings() map[string]string {
	return map[string]string{
		"scheduler.kind": "currentthread",
		"driver.kind":    "epoll",
		"timer.kind":     "wheel",
	}
}

// childEnv carries the child's implementation and configuration.
const childEnv = "WEFT_ECHO_BENCH_CHILD"

type childSpec struct {
	Impl       Impl
	Settings   map[string]any
	BufferSize int
	CPUProfile string
}

// ServeChildIfRequested makes the process an echo server child when RunW8
// or RunW9 started it as one, and returns at once otherwise. A program that
// runs the workloads calls it first thing in main (a test binary, in
// TestMain). As a child it serves, reports its CPU time on request, and
// exits when its parent closes its standard input; it never returns.
func ServeChildIfRequested() {
	spec := os.Getenv(childEnv)
	if spec == "" {
		return
	}
	os.Unsetenv(childEnv)
	var cs childSpec
	if err := json.Unmarshal([]byte(spec), &cs); err != nil {
		fmt.Fprintln(os.Stderr, "echo child: bad spec:", err)
		os.Exit(2)
	}
	if err := runChild(cs); err != nil {
		fmt.Fprintln(os.Stderr, "echo child:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runChild starts the server, prints "addr ADDRESS", then answers commands
// on stdin: "start" marks the CPU clock, "stop" prints "cpu NANOSECONDS"
// used since the mark. It returns when stdin closes.
func runChild(cs childSpec) error {
	addr, stop, err := startServer(cs)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("addr %s\n", addr)
	var mark time.Duration
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		switch in.Text() {
		case "start":
			if cs.CPUProfile != "" {
				f, err := os.Create(cs.CPUProfile)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
			}
			mark = cpuTime()
			fmt.Println("ok")
		case "stop":
			used := cpuTime() - mark
			if cs.CPUProfile != "" {
				pprof.StopCPUProfile()
			}
			fmt.Printf("cpu %d\n", int64(used))
		}
	}
	return in.Err()
}

// cpuTime is the process's user plus system CPU time (getrusage), plus
// that of its running child processes: a server whose driver is a plugin
// does part of its work in the plugin's process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano()+ru.Stime.Nano()) + childrenCPU()
}

func startServer(cs childSpec) (string, func(), error) {
	switch cs.Impl {
	case Weft:
		return startWeft(cs)
	case Go, GoCopy:
		return startGo(cs)
	}
	return "", nil, fmt.Errorf("unknown server implementation %q", cs.Impl)
}

func startWeft(cs childSpec) (string, func(), error) {
	b := rt.NewBuilder().IgnoreEnv()
	for k, v := range DefaultSettings() {
		b.Set(k, v)
	}
	for k, v := range cs.Settings {
		b.Set(k, v)
	}
	r, err := b.Build()
	if err != nil {
		return "", nil, err
	}
	ln, err := wnet.OnRuntime(r, func(cx *core.Context) (*wnet.TCPListener, error) {
		return wnet.ListenTCP(cx, "tcp", "127.0.0.1:0")
	})
	if err != nil {
		r.Close()
		return "", nil, err
	}
	go rt.BlockOn(r, Serve(ln, cs.BufferSize))
	return ln.Addr().String(), func() { r.ShutdownBackground() }, nil
}

// ServeGo serves the echo on Go's net at addr until accepting fails: impl
// Go reads into a buffer of bufSize bytes and writes it back, GoCopy uses
// io.Copy. It is the plain-Go counterpart of Serve.
func ServeGo(impl Impl, addr string, bufSize int) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return serveGo(ln, childSpec{Impl: impl, BufferSize: bufSize})
}

func startGo(cs childSpec) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	go serveGo(ln, cs)
	return ln.Addr().String(), func() { ln.Close() }, nil
}

func serveGo(ln net.Listener, cs childSpec) error {
	if cs.Impl != Go && cs.Impl != GoCopy {
		return fmt.Errorf("echo: %q is not a Go server implementation", cs.Impl)
	}
	size := cs.BufferSize
	if size < 1 {
		size = DefaultBufferSize
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			if cs.Impl == GoCopy {
				io.Copy(c, c)
				return
			}
			buf := make([]byte, size)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if _, werr := c.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
	}
}

// child is a running child server, seen from the parent.
type child struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Scanner
	addr string
}

// childStartLimit bounds the wait for a child server to listen.
const childStartLimit = time.Minute

// startChild starts impl's server in a child process and waits until it
// listens.
func startChild(impl Impl, srv Server) (*child, error) {
	if srv.Addr != "" {
		return &child{addr: srv.Addr}, nil
	}
	exe := srv.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return nil, err
		}
	}
	spec, err := json.Marshal(childSpec{Impl: impl, Settings: srv.Settings, BufferSize: srv.BufferSize, CPUProfile: srv.CPUProfile})
	if err != nil {
		return nil, err
	}
	// A program that does not call ServeChildIfRequested must not run
	// its own job as the child: a test binary given -test.run=^$ runs no
	// test and exits, and most other programs reject the unknown flag.
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(spec))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, in: in, out: bufio.NewScanner(out)}
	// A child that neither listens nor exits within childStartLimit is
	// killed, which ends the wait for its address.
	kill := time.AfterFunc(childStartLimit, func() { cmd.Process.Kill() })
	line, err := c.expect("addr ")
	kill.Stop()
	if err != nil {
		c.close()
		return nil, fmt.Errorf("echo: the %s server child did not start (does %s call echo.ServeChildIfRequested first?): %w", impl, exe, err)
	}
	c.addr = line
	return c, nil
}

// expect reads the child's next line, which must start with prefix, and
// returns the rest.
func (c *child) expect(prefix string) (string, error) {
	if !c.out.Scan() {
		if err := c.out.Err(); err != nil {
			return "", err
		}
		return "", io.ErrUnexpectedEOF
	}
	line := c.out.Text()
	if !strings.HasPrefix(line, prefix) {
		return "", fmt.Errorf("child said %q, want %q...", line, prefix)
	}
	return strings.TrimPrefix(line, prefix), nil
}

// startClock marks the child's CPU clock.
func (c *child) startClock() error {
	if c.cmd == nil {
		return nil
	}
	if _, err := io.WriteString(c.in, "start\n"); err != nil {
		return err
	}
	_, err := c.expect("ok")
	return err
}

// stopClock returns the child's CPU time since startClock.
func (c *child) stopClock() (time.Duration, error) {
	if c.cmd == nil {
		return 0, nil
	}
	if _, err := io.WriteString(c.in, "stop\n"); err != nil {
		return 0, err
	}
	s, err := c.expect("cpu ")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return time.Duration(n), err
}

// close ends the child and waits for it.
func (c *child) close() error {
	if c.cmd == nil {
		return nil
	}
	c.in.Close()
	err := c.cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return fmt.Errorf("echo: server child: %w", err)
	}
	return err
}
