package wire

import (
	"context"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// GRPCPlugin is the go-plugin plugin of both sides. On the plugin side
// Register adds the services to the gRPC server; on the host side
// GRPCClient hands back the connection, on which the host opens its own
// streams.
type GRPCPlugin struct {
	plugin.NetRPCUnsupportedPlugin
	// Register registers the plugin's services; nil on the host side.
	Register func(*grpc.Server)
}

// GRPCServer implements plugin.GRPCPlugin.
func (p *GRPCPlugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	if p.Register != nil {
		p.Register(s)
	}
	return nil
}

// GRPCClient implements plugin.GRPCPlugin: it returns conn itself.
func (p *GRPCPlugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	return conn, nil
}

// LogLevelEnv names the environment variable through which the host tells a
// plugin the lowest log level it will keep ("trace", "debug", "info",
// "warn", "error"), so the plugin does not format records the host drops.
const LogLevelEnv = "WEFT_PLUGIN_LOG_LEVEL"

// HostLifelineEnv names the environment variable through which the host
// tells a plugin the number of an inherited file descriptor: the read end
// of a pipe only the host writes to. The plugin exits when it reads
// end-of-file from it, that is when the host is gone.
const HostLifelineEnv = "WEFT_PLUGIN_HOST_LIFELINE"
