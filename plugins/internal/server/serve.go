// Package server is the plugin side of weft's module plugins: it answers
// the go-plugin handshake and serves the module, session by session. The
// public entry points are in package sdk; tests use the knobs here to build
// deliberately incompatible plugins.
package server

import (
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	"github.com/weftrt/weft/plugins/internal/wire"
)

// Options says what a plugin binary serves and how it shakes hands.
type Options struct {
	// Info is the module's description; Protocol and PID are filled in.
	Info wire.Info
	// Register registers the module's session service.
	Register func(s *grpc.Server)
	// Versions are the protocol versions offered; nil means
	// wire.ProtocolVersion only.
	Versions []int
	// Cookie replaces the magic cookie value; "" means the real one.
	Cookie string
	// Describe, when set, changes the description after Protocol and
	// PID are filled in (tests make plugins that lie about themselves).
	Describe func(*wire.Info)
}

// stderr is the process's standard error as it was before go-plugin
// redirected os.Stderr: lines written to it reach the host's stderr
// scanner, which parses hclog's JSON format.
var stderr io.Writer = os.Stderr

// Serve serves o until the host ends the plugin. It does not return when
// the handshake fails (go-plugin exits the process), and it exits the
// process when the host is gone (see watchHost).
func Serve(o Options) {
	watchHost()
	versions := o.Versions
	if versions == nil {
		versions = []int{wire.ProtocolVersion}
	}
	cookie := o.Cookie
	if cookie == "" {
		cookie = wire.MagicCookieValue
	}
	set := map[int]plugin.PluginSet{}
	for _, v := range versions {
		info := o.Info
		info.Protocol = v
		info.PID = os.Getpid()
		if o.Describe != nil {
			o.Describe(&info)
		}
		set[v] = plugin.PluginSet{wire.PluginName: &wire.GRPCPlugin{Register: func(s *grpc.Server) {
			s.RegisterService(&wire.ModuleDesc, moduleServer{info})
			o.Register(s)
		}}}
	}
	plugin.Serve(&plugin.ServeConfig{
		HandshakeConfig: plugin.HandshakeConfig{
			ProtocolVersion:  uint(versions[0]),
			MagicCookieKey:   wire.MagicCookieKey,
			MagicCookieValue: cookie,
		},
		VersionedPlugins: set,
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts,
				grpc.MaxRecvMsgSize(wire.MaxMessage),
				grpc.MaxSendMsgSize(wire.MaxMessage))...)
		},
		Logger: hclog.New(&hclog.LoggerOptions{
			Name:       "go-plugin",
			Level:      hclog.LevelFromString(levelName()),
			Output:     stderr,
			JSONFormat: true,
		}),
	})
}

type moduleServer struct{ info wire.Info }

func (m moduleServer) Info() wire.Info { return m.info }

// levelName is the level the host asked for, "info" by default.
func levelName() string {
	if l := os.Getenv(wire.LogLevelEnv); l != "" {
		return l
	}
	return "info"
}

// Logger returns a logger whose records reach the host's log/slog logger
// with their level and attributes: it writes hclog's JSON line format to
// the process's original standard error, which the host parses.
func Logger() *slog.Logger {
	var level slog.Level
	switch strings.ToLower(levelName()) {
	case "trace", "debug":
		level = slog.LevelDebug
	case "warn":
		level = slog.LevelWarn
	case "error":
		level = slog.LevelError
	}
	return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{
		Level: level,
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) > 0 {
				return a
			}
			switch a.Key {
			case slog.TimeKey:
				return slog.String("@timestamp", a.Value.Time().Format("2006-01-02T15:04:05.000000Z07:00"))
			case slog.LevelKey:
				return slog.String("@level", hclogLevel(a.Value.Any().(slog.Level)))
			case slog.MessageKey:
				return slog.String("@message", a.Value.String())
			}
			return a
		},
	}))
}

// hclogLevel names a slog level as hclog does.
func hclogLevel(l slog.Level) string {
	switch {
	case l < slog.LevelDebug:
		return "trace"
	case l < slog.LevelInfo:
		return "debug"
	case l < slog.LevelWarn:
		return "info"
	case l < slog.LevelError:
		return "warn"
	}
	return "error"
}
