package plugins

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
)

// ModuleName is the name under which the plugin modules are registered for
// each kind: a configuration section selects one with kind: plugin.
const ModuleName = "plugin"

// Config is the configuration of a module of kind plugin, for a driver, a
// timer or a scheduler section:
//
//	driver:
//	  kind: plugin
//	  path: /usr/libexec/weft/epoll-driver
//	  sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//	  args: [--verbose]
//	  env: [EPOLL_EVENTS=256]
//	  restart: {max: 0, backoff: 100ms, max_backoff: 10s, reset_after: 1m}
//	timer:
//	  kind: plugin
//	  path: /usr/libexec/weft/wheel-timer
//	  sha256: ...
//	  fire_timeout: 5s
//	scheduler:
//	  kind: plugin
//	  path: /usr/libexec/weft/priority-policy
//	  sha256: ...
//	  decision_timeout: 200ms
//	  max_decision: 256
//
// The keys of one kind (max_in_flight for a driver, fire_timeout for a
// timer, decision_timeout for a scheduler) are accepted and ignored in the
// sections of the others.
//
// Validate checks the binary: it must exist and be executable, match its
// digest, complete the handshake, and serve the section's kind. Each
// problem is a *core.ConfigError naming its key.
type Config struct {
	kind core.Kind

	// Path is the plugin binary; a relative path is taken from the
	// working directory.
	Path string `koanf:"path"`
	// SHA256 is the binary's digest, 64 hexadecimal digits. Required
	// unless InsecureSkipChecksum.
	SHA256 string `koanf:"sha256"`
	// InsecureSkipChecksum runs the binary without checking its digest.
	InsecureSkipChecksum bool `koanf:"insecure_skip_checksum"`
	// Name names the plugin in logs, errors and listings; the binary's
	// base name by default.
	Name string `koanf:"name"`
	// Args are passed to the binary.
	Args []string `koanf:"args"`
	// Env entries, "KEY=value", are added to the inherited environment.
	Env []string `koanf:"env"`
	// StartTimeout bounds the handshake.
	StartTimeout time.Duration `koanf:"start_timeout"`
	// MaxInFlight and MaxInFlightBytes bound the operations sent to a
	// driver plugin and not yet completed (see DriverOptions).
	MaxInFlight      int `koanf:"max_in_flight"`
	MaxInFlightBytes int `koanf:"max_in_flight_bytes"`
	// WriteBehind bounds a driver plugin's stream writes reported written
	// but not yet written, per handle (see DriverOptions).
	WriteBehind int `koanf:"write_behind"`
	// FireTimeout bounds a timer plugin's answer to a Fire (see
	// TimerOptions).
	FireTimeout time.Duration `koanf:"fire_timeout"`
	// DecisionTimeout, MaxDecision and EventInterval configure a
	// scheduler policy plugin (see SchedulerOptions).
	DecisionTimeout time.Duration `koanf:"decision_timeout"`
	MaxDecision     int           `koanf:"max_decision"`
	EventInterval   int           `koanf:"event_interval"`
	// Restart is the policy after a crash.
	Restart RestartConfig `koanf:"restart"`
}

// RestartConfig is the restart section of a plugin module; see
// RestartPolicy.
type RestartConfig struct {
	Enabled    bool          `koanf:"enabled"`
	Max        int           `koanf:"max"`
	Backoff    time.Duration `koanf:"backoff"`
	MaxBackoff time.Duration `koanf:"max_backoff"`
	ResetAfter time.Duration `koanf:"reset_after"`
}

// DefaultConfig returns the defaults of a plugin module of kind k.
func DefaultConfig(k core.Kind) *Config {
	return &Config{
		kind:             k,
		StartTimeout:     30 * time.Second,
		MaxInFlight:      4096,
		MaxInFlightBytes: 32 << 20,
		WriteBehind:      1 << 20,
		FireTimeout:      5 * time.Second,
		DecisionTimeout:  200 * time.Millisecond,
		MaxDecision:      256,
		EventInterval:    61,
		Restart: RestartConfig{
			Enabled:    true,
			Backoff:    100 * time.Millisecond,
			MaxBackoff: 10 * time.Second,
			ResetAfter: time.Minute,
		},
	}
}

// Kind returns the module kind the configuration is for.
func (c *Config) Kind() core.Kind { return c.kind }

// Validate implements the configuration contract of core.Module: every
// problem is a *core.ConfigError whose key is relative to the section.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, problem string, cause error) {
		errs = append(errs, &core.ConfigError{Key: key, Problem: problem, Err: cause})
	}
	fileOK := false
	if c.Path == "" {
		bad("path", "required: the plugin binary to run", nil)
	} else if err := checkExecutable(c.Path); err != nil {
		bad("path", err.Error(), err)
	} else {
		fileOK = true
	}
	sum, sumErr := c.digest()
	switch {
	case c.InsecureSkipChecksum:
	case c.SHA256 == "":
		bad("sha256", "required: the SHA-256 of the binary, 64 hexadecimal digits (or insecure_skip_checksum: true to run it unchecked)", nil)
		fileOK = false
	case sumErr != nil:
		bad("sha256", sumErr.Error(), sumErr)
		fileOK = false
	case fileOK:
		actual, err := fileSHA256(c.Path)
		if err != nil {
			bad("path", "cannot read the binary: "+err.Error(), err)
			fileOK = false
		} else if !bytes.Equal(actual, sum) {
			bad("sha256", fmt.Sprintf("checksum mismatch: %s has sha256 %s", c.Path, hex.EncodeToString(actual)), ErrChecksumMismatch)
			fileOK = false
		}
	}
	for i, e := range c.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			bad(fmt.Sprintf("env[%d]", i), fmt.Sprintf("want KEY=value, got %q", e), nil)
		}
	}
	if c.StartTimeout <= 0 {
		bad("start_timeout", fmt.Sprintf("must be > 0, got %v", c.StartTimeout), nil)
	}
	if c.MaxInFlight < 1 {
		bad("max_in_flight", fmt.Sprintf("must be >= 1, got %d", c.MaxInFlight), nil)
	}
	if c.MaxInFlightBytes < MaxIO {
		bad("max_in_flight_bytes", fmt.Sprintf("must be >= %d (one operation's largest buffer), got %d", MaxIO, c.MaxInFlightBytes), nil)
	}
	if c.WriteBehind < MaxIO {
		bad("write_behind", fmt.Sprintf("must be >= %d, got %d", MaxIO, c.WriteBehind), nil)
	}
	switch c.kind {
	case core.KindTimer:
		if c.FireTimeout <= 0 {
			bad("fire_timeout", fmt.Sprintf("must be > 0, got %v", c.FireTimeout), nil)
		}
	case core.KindScheduler:
		if c.DecisionTimeout <= 0 {
			bad("decision_timeout", fmt.Sprintf("must be > 0, got %v", c.DecisionTimeout), nil)
		}
		if c.MaxDecision < 1 || c.MaxDecision > wire.MaxDecision {
			bad("max_decision", fmt.Sprintf("must be >= 1 and <= %d, got %d", wire.MaxDecision, c.MaxDecision), nil)
		}
		if c.EventInterval < 1 {
			bad("event_interval", fmt.Sprintf("must be >= 1, got %d", c.EventInterval), nil)
		}
	}
	r := c.Restart
	if r.Max < 0 {
		bad("restart.max", fmt.Sprintf("must be >= 0 (0: no limit), got %d", r.Max), nil)
	}
	if r.Backoff <= 0 {
		bad("restart.backoff", fmt.Sprintf("must be > 0, got %v", r.Backoff), nil)
	}
	if r.MaxBackoff < r.Backoff {
		bad("restart.max_backoff", fmt.Sprintf("must be >= restart.backoff (%v), got %v", r.Backoff, r.MaxBackoff), nil)
	}
	if r.ResetAfter <= 0 {
		bad("restart.reset_after", fmt.Sprintf("must be > 0, got %v", r.ResetAfter), nil)
	}
	// The handshake, last: only for a binary that passed the file checks.
	if fileOK && c.kind != "" {
		info, err := inspectCached(c.launchConfig(nil))
		switch {
		case errors.Is(err, ErrWrongKind):
			bad("path", fmt.Sprintf("%s serves a %s plugin (%q), not a %s", c.Path, info.Kind, info.Name, c.kind), err)
		case err != nil:
			bad("path", err.Error(), err)
		}
	}
	return errors.Join(errs...)
}

// digest decodes SHA256.
func (c *Config) digest() ([]byte, error) {
	if c.SHA256 == "" {
		return nil, nil
	}
	s := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(c.SHA256)), "sha256:")
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("want 64 hexadecimal digits, got %q", c.SHA256)
	}
	return b, nil
}

// launchConfig turns the configuration into a LaunchConfig.
func (c *Config) launchConfig(log *slog.Logger) LaunchConfig {
	sum, _ := c.digest()
	return LaunchConfig{
		Path:                 c.Path,
		SHA256:               sum,
		InsecureSkipChecksum: c.InsecureSkipChecksum,
		Args:                 c.Args,
		Env:                  c.Env,
		Kind:                 string(c.kind),
		Name:                 c.Name,
		StartTimeout:         c.StartTimeout,
		Log:                  log,
	}
}

// restartPolicy turns the restart section into a RestartPolicy.
func (c *Config) restartPolicy() RestartPolicy {
	return RestartPolicy{
		Disabled:   !c.Restart.Enabled,
		Max:        c.Restart.Max,
		Backoff:    c.Restart.Backoff,
		MaxBackoff: c.Restart.MaxBackoff,
		ResetAfter: c.Restart.ResetAfter,
	}
}

// inspections caches successful handshakes made by Validate, keyed by the
// binary's path, digest, size and modification time, so loading a
// configuration twice starts the plugin once. Failures are not cached: a
// timeout may be transient.
var inspections sync.Map // inspectKey → wire.Info

type inspectKey struct {
	path, sum string
	size      int64
	mtime     time.Time
}

func inspectCached(lc LaunchConfig) (wire.Info, error) {
	abs, _ := filepath.Abs(lc.Path)
	st, err := os.Stat(lc.Path)
	if err != nil {
		return wire.Info{}, lc.wrap(err)
	}
	key := inspectKey{path: abs, sum: hex.EncodeToString(lc.SHA256), size: st.Size(), mtime: st.ModTime()}
	want := lc.Kind
	var info wire.Info
	if v, ok := inspections.Load(key); ok {
		info = v.(wire.Info)
	} else {
		lc.Kind = ""
		p, err := launch(&lc)
		if err != nil {
			return wire.Info{}, err
		}
		info = p.info
		p.kill()
		inspections.Store(key, info)
	}
	if want != "" && info.Kind != want {
		return info, lc.wrap(fmt.Errorf("%w: it serves a %s module (%q), not a %s", ErrWrongKind, info.Kind, info.Name, want))
	}
	return info, nil
}
