package plugins

import (
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

// Info describes a plugin binary, as `weft plugins inspect` prints it.
type Info struct {
	// Path is the binary's absolute path; SHA256 its digest in hex.
	Path   string
	SHA256 string
	// Kind is "driver", "timer" or "scheduler"; Name is the module the
	// plugin serves ("epoll").
	Kind string
	Name string
	// Protocol is the negotiated weft plugin protocol version.
	Protocol int
	// Capabilities lists optional features the plugin reports.
	Capabilities []string
	// Handshake is how long starting the process and completing the
	// handshake took.
	Handshake time.Duration
}

// InspectOptions adjust Inspect.
type InspectOptions struct {
	// SHA256 is the expected digest in hex; "" trusts the file as it is
	// (its digest is computed and reported, and go-plugin checks it
	// again before the process starts).
	SHA256 string
	// Args and Env are passed to the binary.
	Args, Env []string
	// Timeout bounds the handshake (30 s by default).
	Timeout time.Duration
	// Log receives the plugin's log lines; slog.Default() when nil.
	Log *slog.Logger
}

// Inspect starts the binary at path, completes the handshake (magic cookie,
// protocol version negotiation, AutoMTLS), asks the plugin to describe
// itself and ends it. The error names the plugin and says which step
// failed; it matches ErrChecksumMismatch, ErrHandshake or a file error.
func Inspect(path string, o InspectOptions) (Info, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	lc := &LaunchConfig{Path: abs, Args: o.Args, Env: o.Env, StartTimeout: o.Timeout, Log: o.Log}
	if err := checkExecutable(abs); err != nil {
		return Info{}, lc.wrap(err)
	}
	sum, err := fileSHA256(abs)
	if err != nil {
		return Info{}, lc.wrap(err)
	}
	lc.SHA256 = sum
	if o.SHA256 != "" {
		c := Config{SHA256: o.SHA256}
		want, err := c.digest()
		if err != nil {
			return Info{}, lc.wrap(fmt.Errorf("%w: %v", ErrChecksumMismatch, err))
		}
		lc.SHA256 = want
	}
	start := time.Now()
	p, err := launch(lc)
	if err != nil {
		return Info{}, err
	}
	took := time.Since(start)
	p.kill()
	return Info{
		Path:         abs,
		SHA256:       hex.EncodeToString(sum),
		Kind:         p.info.Kind,
		Name:         p.info.Name,
		Protocol:     p.info.Protocol,
		Capabilities: p.info.Capabilities,
		Handshake:    took,
	}, nil
}

// Status is one plugin module as `weft plugins list` shows it.
type Status struct {
	// Section is the configuration section ("driver").
	Section core.Kind
	// Name and Path identify the plugin.
	Name, Path string
	// State is "running", "restarting", "failed" or "stopped" for a
	// plugin of a live runtime; "ok" or "error" for a configured one
	// that was inspected.
	State string
	// Module and Protocol are what the plugin reported.
	Module   string
	Protocol int
	// Restarts counts restarts after crashes (live plugins).
	Restarts int
	// Err is the inspection's error, for State "error".
	Err error
}

// live lists the plugin modules of this process's runtimes.
var live struct {
	sync.Mutex
	m map[*supervisor]core.Kind
}

func track(s *supervisor, k core.Kind) {
	live.Lock()
	defer live.Unlock()
	if live.m == nil {
		live.m = map[*supervisor]core.Kind{}
	}
	live.m[s] = k
}

func untrack(s *supervisor) {
	live.Lock()
	defer live.Unlock()
	delete(live.m, s)
}

// List returns the plugin modules running in this process (every driver,
// timer or scheduler built from a plugin and not yet closed), sorted by
// section and name.
func List() []Status {
	live.Lock()
	defer live.Unlock()
	var out []Status
	for s, k := range live.m {
		st := Status{Section: k, Name: s.lc.name(), Path: s.lc.Path, State: s.state(), Restarts: s.restarts()}
		s.mu.Lock()
		if s.proc != nil {
			st.Module, st.Protocol = s.proc.info.Name, s.proc.info.Protocol
		}
		s.mu.Unlock()
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b Status) int {
		if a.Section != b.Section {
			return slices.Index(core.Kinds, a.Section) - slices.Index(core.Kinds, b.Section)
		}
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// ListConfigured returns the plugin modules a composition selects, each
// inspected (a handshake with the binary): State "ok" with what it
// reported, or "error" with why.
func ListConfigured(c *config.Composition) []Status {
	var out []Status
	for _, k := range core.Kinds {
		sel := c.Selection(k)
		cfg, ok := sel.Config.(*Config)
		if sel.Name != ModuleName || !ok {
			continue
		}
		lc := cfg.launchConfig(nil)
		st := Status{Section: k, Name: lc.name(), Path: cfg.Path}
		p, err := launch(&lc)
		if err != nil {
			st.State, st.Err = "error", err
		} else {
			st.State, st.Module, st.Protocol = "ok", p.info.Name, p.info.Protocol
			p.kill()
		}
		out = append(out, st)
	}
	return out
}
