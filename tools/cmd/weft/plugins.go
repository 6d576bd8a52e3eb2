package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/plugins/sdk"
	"github.com/weftrt/weft/runtime/config"
)

var pluginsCommand = &command{
	name:    "plugins",
	summary: "inspect plugin binaries and list the configured plugins",
	usage: `usage: weft plugins inspect [--sha256 HEX] PATH [ARG ...]
       weft plugins list [--config FILE]
       weft plugins serve-driver NAME
       weft plugins serve-timer NAME

Inspect starts the plugin binary at PATH, completes go-plugin's handshake
(magic cookie, protocol version, AutoMTLS), asks the plugin what it serves
and ends it; ARGs are passed to the binary. It prints the binary's path and SHA-256, the kind and name of
the module it serves, the negotiated protocol version and how long the
handshake took. With --sha256 the binary must have that digest.

List loads the configuration (defaults, then FILE, then WEFT_ environment
variables) and inspects every section whose kind is "plugin", printing one
line per plugin with its state ("ok" or the error).

Serve-driver serves the driver module NAME compiled into this executable
(weft modules lists them) as a driver plugin: the weft executable is then
a plugin binary of its own, e.g.

  driver: {kind: plugin, path: /usr/local/bin/weft, sha256: <digest>,
           args: [plugins, serve-driver, epoll]}

Serve-timer does the same for a compiled-in timer module. Both are meant
to be started by a host, not by hand.

Inspect and list exit 1 when a plugin fails its checks.
`,
}

func init() { pluginsCommand.run = runPlugins }

func runPlugins(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, pluginsCommand.usage)
		return exitUsage
	}
	switch args[0] {
	case "inspect":
		return runPluginsInspect(args[1:], stdout, stderr)
	case "list":
		return runPluginsList(args[1:], stdout, stderr)
	case "serve-driver":
		return runPluginsServeDriver(args[1:], stderr)
	case "serve-timer":
		return runPluginsServeTimer(args[1:], stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, pluginsCommand.usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "weft plugins: unknown subcommand %q (valid: inspect, list, serve-driver, serve-timer)\n", args[0])
	return exitUsage
}

func runPluginsInspect(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(pluginsCommand, stderr)
	digest := fs.String("sha256", "", "the expected SHA-256 of the binary, in hex")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() < 1 {
		fmt.Fprintln(stderr, "usage: weft plugins inspect [--sha256 HEX] PATH [ARG ...]")
		return exitUsage
	}
	info, err := plugins.Inspect(fs.Arg(0), plugins.InspectOptions{SHA256: *digest, Args: fs.Args()[1:]})
	if err != nil {
		fmt.Fprintf(stderr, "weft plugins inspect: %v\n", err)
		return exitProblem
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "path\t%s\n", info.Path)
	fmt.Fprintf(tw, "sha256\t%s\n", info.SHA256)
	fmt.Fprintf(tw, "kind\t%s\n", info.Kind)
	fmt.Fprintf(tw, "module\t%s\n", info.Name)
	fmt.Fprintf(tw, "protocol\t%d\n", info.Protocol)
	if len(info.Capabilities) > 0 {
		fmt.Fprintf(tw, "capabilities\t%s\n", strings.Join(info.Capabilities, ", "))
	}
	fmt.Fprintf(tw, "handshake\t%v\n", info.Handshake.Round(1e5))
	tw.Flush()
	return exitOK
}

func runPluginsList(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(pluginsCommand, stderr)
	path := fs.String("config", "", "configuration file (YAML, TOML or JSON)")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: weft plugins list [--config FILE]")
		return exitUsage
	}
	comp, err := config.LoadWith(config.LoadOptions{Path: *path, Environ: environ()})
	if err != nil {
		for _, p := range flatten(err) {
			fmt.Fprintln(stderr, p)
		}
		return exitProblem
	}
	list := plugins.ListConfigured(comp)
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no plugin is configured")
		return exitOK
	}
	status := exitOK
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SECTION\tNAME\tPATH\tSTATE\tMODULE\tPROTOCOL")
	for _, st := range list {
		state, module, protocol := st.State, st.Module, fmt.Sprint(st.Protocol)
		if st.Err != nil {
			state, module, protocol = "error: "+st.Err.Error(), "-", "-"
			status = exitProblem
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", st.Section, st.Name, st.Path, state, module, protocol)
	}
	tw.Flush()
	return status
}

// runPluginsServeDriver serves a compiled-in driver module as a plugin. It
// returns only on a usage error: serving ends the process.
func runPluginsServeDriver(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: weft plugins serve-driver NAME")
		return exitUsage
	}
	name := args[0]
	if name == plugins.ModuleName {
		fmt.Fprintln(stderr, "weft plugins serve-driver: a plugin cannot serve the plugin driver")
		return exitUsage
	}
	m, err := core.Lookup(core.KindDriver, name)
	if err != nil {
		fmt.Fprintf(stderr, "weft plugins serve-driver: %v\n", err)
		return exitUsage
	}
	sdk.ServeDriver(name, func() (core.Driver, error) {
		var cfg any
		if m.NewConfig != nil {
			cfg = m.NewConfig()
		}
		return m.BuildDriver(cfg, core.DriverParams{})
	})
	return exitOK
}

// runPluginsServeTimer serves a compiled-in timer module as a plugin,
// built on the clock the host mirrors to it. It returns only on a usage
// error: serving ends the process.
func runPluginsServeTimer(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: weft plugins serve-timer NAME")
		return exitUsage
	}
	name := args[0]
	if name == plugins.ModuleName {
		fmt.Fprintln(stderr, "weft plugins serve-timer: a plugin cannot serve the plugin timer")
		return exitUsage
	}
	m, err := core.Lookup(core.KindTimer, name)
	if err != nil {
		fmt.Fprintf(stderr, "weft plugins serve-timer: %v\n", err)
		return exitUsage
	}
	sdk.ServeTimer(name, func(clock core.Clock) (core.Timer, error) {
		var cfg any
		if m.NewConfig != nil {
			cfg = m.NewConfig()
		}
		return m.BuildTimer(cfg, core.TimerParams{Clock: clock, Shards: 1})
	})
	return exitOK
}
