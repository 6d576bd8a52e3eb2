package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/weftrt/weft/plugins/internal/wire"
)

// LaunchConfig says how to start a plugin process.
type LaunchConfig struct {
	// Path is the plugin binary.
	Path string
	// SHA256 is the binary's expected SHA-256 digest. It is required
	// unless InsecureSkipChecksum is set: go-plugin's SecureConfig checks
	// it before the process starts.
	SHA256 []byte
	// InsecureSkipChecksum runs the binary without checking its digest.
	InsecureSkipChecksum bool
	// Args are the binary's arguments; Env entries ("KEY=value") are added
	// to the host's environment, overriding it.
	Args []string
	Env  []string
	// Kind is the module kind the plugin must serve (wire.KindDriver,
	// ...); "" accepts any.
	Kind string
	// Name names the plugin in logs and errors; the binary's base name by
	// default.
	Name string
	// StartTimeout bounds the handshake; 30 s by default.
	StartTimeout time.Duration
	// Log receives go-plugin's diagnostics and the plugin's log lines;
	// slog.Default() when nil.
	Log *slog.Logger
}

func (c *LaunchConfig) name() string {
	if c.Name != "" {
		return c.Name
	}
	return filepath.Base(c.Path)
}

func (c *LaunchConfig) wrap(err error) error {
	return &Error{Plugin: c.name(), Path: c.Path, Err: err}
}

// hostTies are the ways a plugin is made to end with its host (see
// tieToHost); tests turn each off to check the other alone.
var hostTies = struct{ lifeline, deathSignal bool }{true, true}

// process is a running, handshaken plugin process.
type process struct {
	client *plugin.Client
	conns  *pluginConns
	conn   *grpc.ClientConn
	info   wire.Info
	// pid is the process the host started, the only one it signals. The
	// pid the plugin reports (info.PID) differs when the binary is a
	// wrapper that starts the plugin as its child, and is never trusted
	// with a signal.
	pid int
	log *slog.Logger
}

// fileSHA256 returns the digest of the file at path.
func fileSHA256(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// checkExecutable reports a path that cannot be run, with the reason.
func checkExecutable(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("no such file: %w", err)
		}
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%s is a directory, not a plugin binary", path)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (mode %v)", path, st.Mode())
	}
	if st.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable (mode %v)", path, st.Mode().Perm())
	}
	return nil
}

// launch starts the plugin, checks its digest, completes the handshake
// (magic cookie, protocol version, AutoMTLS) and its Info, and checks its
// kind. Every error is an *Error naming the plugin.
func launch(c *LaunchConfig) (*process, error) {
	if err := checkExecutable(c.Path); err != nil {
		return nil, c.wrap(err)
	}
	log := c.Log
	if log == nil {
		log = slog.Default()
	}
	var secure *plugin.SecureConfig
	if !c.InsecureSkipChecksum {
		if len(c.SHA256) != sha256.Size {
			return nil, c.wrap(fmt.Errorf("%w: no SHA-256 digest configured (required unless the checksum check is explicitly skipped)", ErrChecksumMismatch))
		}
		secure = &plugin.SecureConfig{Checksum: c.SHA256, Hash: sha256.New()}
	}
	timeout := c.StartTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	cmd := exec.Command(c.Path, c.Args...)
	// go-plugin appends the handshake variables; the host's environment
	// comes first so the configured entries override it (exec keeps the
	// last value of a duplicated key).
	cmd.Env = append(append(os.Environ(), c.Env...), wire.LogLevelEnv+"="+levelName(log))
	// The plugin leads a process group of its own, and ends with the host
	// (see tieToHost).
	tieToHost(cmd)
	stderrTail := &tail{max: 4 << 10}
	plog := log.With("plugin", c.name())
	conns := &pluginConns{}
	client := plugin.NewClient(&plugin.ClientConfig{
		GRPCDialOptions: []grpc.DialOption{grpc.WithContextDialer(conns.dial)},
		HandshakeConfig: plugin.HandshakeConfig{
			MagicCookieKey:   wire.MagicCookieKey,
			MagicCookieValue: wire.MagicCookieValue,
		},
		VersionedPlugins: map[int]plugin.PluginSet{
			wire.ProtocolVersion: {wire.PluginName: &wire.GRPCPlugin{}},
		},
		Cmd:              cmd,
		SkipHostEnv:      true,
		SecureConfig:     secure,
		AllowedProtocols: []plugin.Protocol{plugin.ProtocolGRPC},
		AutoMTLS:         true,
		StartTimeout:     timeout,
		Logger:           NewHCLogAdapter(log).Named(c.name()),
		Stderr:           stderrTail,
		SyncStdout:       &lineWriter{emit: func(l string) { plog.Info(l, "stream", "stdout") }},
		SyncStderr:       &lineWriter{emit: func(l string) { plog.Warn(l, "stream", "stderr") }},
	})
	// go-plugin forks the process inside Client, on the calling thread. A
	// parent-death signal fires when the thread that forked ends, not the
	// host, and a goroutine locked to its thread (a thread-per-core
	// worker) ends its thread when it exits: the fork happens on a fresh
	// goroutine, whose thread the Go runtime never ends.
	var rpc plugin.ClientProtocol
	var err error
	started := make(chan struct{})
	go func() {
		defer close(started)
		var addr net.Addr
		if addr, err = client.Start(); err == nil {
			conns.setAddr(addr)
			rpc, err = client.Client()
		}
	}()
	<-started
	pid := 0
	if cmd.Process != nil {
		pid = cmd.Process.Pid
	}
	p := &process{client: client, conns: conns, pid: pid, log: plog}
	if err != nil {
		p.end(failGrace)
		return nil, c.wrap(classify(c, err, stderrTail.String()))
	}
	raw, err := rpc.Dispense(wire.PluginName)
	if err != nil {
		p.kill()
		return nil, c.wrap(fmt.Errorf("%w: %v", ErrHandshake, err))
	}
	p.conn = raw.(*grpc.ClientConn)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	info, err := wire.CallInfo(ctx, p.conn)
	cancel()
	if err != nil {
		p.kill()
		return nil, c.wrap(fmt.Errorf("%w: asking the plugin to describe itself (is it a weft module plugin?): %v", ErrHandshake, err))
	}
	if v := client.NegotiatedVersion(); info.Protocol != v {
		p.kill()
		return nil, c.wrap(fmt.Errorf("%w: the plugin describes protocol %d, the handshake negotiated %d", ErrHandshake, info.Protocol, v))
	}
	if c.Kind != "" && info.Kind != c.Kind {
		p.kill()
		return nil, c.wrap(fmt.Errorf("%w: it serves a %s module (%q), not a %s", ErrWrongKind, info.Kind, info.Name, c.Kind))
	}
	p.info = info
	return p, nil
}

// classify turns go-plugin's start errors into ours.
func classify(c *LaunchConfig, err error, stderr string) error {
	msg := err.Error()
	quote := ""
	if stderr != "" {
		quote = "; its standard error ended with: " + lastLines(stderr, 3)
	}
	switch {
	case errors.Is(err, plugin.ErrChecksumsDoNotMatch):
		actual := "unreadable"
		if sum, err := fileSHA256(c.Path); err == nil {
			actual = hex.EncodeToString(sum)
		}
		return fmt.Errorf("%w: the binary's sha256 is %s, the configuration expects %s", ErrChecksumMismatch, actual, hex.EncodeToString(c.SHA256))
	case strings.Contains(msg, "incompatible API version"):
		return fmt.Errorf("%w: no protocol version in common: the host speaks weft plugin protocol %d (%s)", ErrHandshake, wire.ProtocolVersion, msg)
	case strings.Contains(msg, "incompatible core API version"):
		return fmt.Errorf("%w: the plugin was built with an incompatible go-plugin (%s)", ErrHandshake, firstLine(msg))
	case strings.Contains(msg, "exited before we could connect"),
		strings.Contains(msg, "Failed to read any lines from plugin's stdout"):
		return fmt.Errorf("%w: the process exited before completing the handshake; a wrong magic cookie (not a weft plugin, or not built with weft's plugin SDK) or a crash at start%s", ErrHandshake, quote)
	case strings.Contains(msg, "Unrecognized remote plugin message"):
		return fmt.Errorf("%w: the process did not speak go-plugin's handshake (%s)%s", ErrHandshake, firstLine(msg), quote)
	case strings.Contains(msg, "unsupported plugin protocol"):
		return fmt.Errorf("%w: %s (weft plugins use gRPC)", ErrHandshake, msg)
	case strings.Contains(msg, "timeout while waiting for plugin to start"):
		return fmt.Errorf("%w: the process did not complete the handshake in time%s", ErrHandshake, quote)
	}
	return fmt.Errorf("starting the plugin: %w%s", err, quote)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// How long ending a process may take before its process group is killed:
// killGrace after a graceful stop (go-plugin waits two seconds for the
// process to exit, then kills it), failGrace after a failed start (the
// process was killed already).
const (
	killGrace = 5 * time.Second
	failGrace = time.Second
)

// kill ends the process: gracefully (go-plugin's controller asks the
// plugin to stop; its gRPC server drains) and by force after two seconds.
func (p *process) kill() { p.end(killGrace) }

// end ends the process through go-plugin's Kill, and kills the process
// group when that takes longer than grace.
//
// go-plugin's Kill returns once it has read the process's standard output
// and error to their end and reaped it. A process that started a child
// which inherited those pipes (a script that runs a command without exec)
// keeps them open after it died, and Kill would wait for the child. The
// child is in the plugin's process group (tieToHost), so killing the group
// closes the pipes. The group's id is the plugin's pid, which no other
// process can take while go-plugin has not reaped the plugin, and it reaps
// only after the pipes close: the group killed is the plugin's.
func (p *process) end(grace time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.client.Kill()
		p.conns.closeAll()
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	if p.pid > 0 {
		p.log.Warn("the plugin's process did not end in time: something it started holds its standard output or error; killing its process group", "pid", p.pid, "grace", grace)
		killGroup(p.pid)
	}
	<-done
}

// pluginConns dials the connections gRPC makes to a plugin and closes
// them when the process has ended.
//
// go-plugin's Kill closes its gRPC client, but gRPC closes a connection
// with streams still open (the session stream, go-plugin's standard output
// stream) only once they end, on a goroutine of its own: the descriptor
// would outlive Kill by an unknown time. Closing the connections here
// makes ending a process release every descriptor it held before it
// returns.
type pluginConns struct {
	mu       sync.Mutex
	addr     net.Addr
	open     []net.Conn
	closed   bool
	dialling sync.WaitGroup // dials under way; Add only while !closed, under mu
}

// setAddr records the address the handshake gave; it is called before
// gRPC dials.
func (pc *pluginConns) setAddr(addr net.Addr) {
	pc.mu.Lock()
	pc.addr = addr
	pc.mu.Unlock()
}

// dial dials the plugin's address, as go-plugin's own dialer does (weft
// does not use its connection multiplexing), and remembers the
// connection. go-plugin dials while holding its client's lock, so the
// address comes from setAddr, not from the client.
func (pc *pluginConns) dial(ctx context.Context, _ string) (net.Conn, error) {
	pc.mu.Lock()
	addr, closed := pc.addr, pc.closed
	if !closed {
		pc.dialling.Add(1)
	}
	pc.mu.Unlock()
	if closed {
		return nil, net.ErrClosed
	}
	defer pc.dialling.Done()
	if addr == nil {
		return nil, errors.New("dialling a plugin before its handshake gave an address")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, addr.Network(), addr.String())
	if err != nil {
		return nil, err
	}
	pc.mu.Lock()
	defer pc.mu.Unlock()
	if pc.closed {
		c.Close()
		return nil, net.ErrClosed
	}
	pc.open = append(pc.open, c)
	return c, nil
}

// closeAll closes every connection dialled and waits for dials under
// way, which close what they get: gRPC redials on a goroutine of its own
// when the plugin's end of a connection closes first, and the process's
// listener may still accept then.
func (pc *pluginConns) closeAll() {
	pc.mu.Lock()
	open := pc.open
	pc.open, pc.closed = nil, true
	pc.mu.Unlock()
	for _, c := range open {
		c.Close()
	}
	pc.dialling.Wait()
}
