package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/weftrt/weft/runtime/config"
)

var configCommand = &command{
	name:    "config",
	summary: "check a configuration file, or print the default one",
	usage: `usage: weft config check [-noenv] FILE
       weft config defaults

Check loads FILE (YAML, TOML or JSON, by its extension) as a runtime would:
over the defaults, with the WEFT_ environment variables on top unless
-noenv is given. When it is valid, check prints every effective key with its
value and exits 0. Otherwise it prints every problem, one per line, to
standard error and exits 1. It finds what building a runtime from FILE
would: every bad key, the bounds of what this machine can serve, and
modules that do not exist on this system. A WEFT_ variable that names no
key is a warning on standard error, as it is for a runtime, and not a
problem.

Defaults prints the default composition as a YAML file that lists every key
of the default modules.
`,
}

func init() { configCommand.run = runConfig }

func runConfig(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, configCommand.usage)
		return exitUsage
	}
	switch args[0] {
	case "check":
		return runConfigCheck(args[1:], stdout, stderr)
	case "defaults":
		return runConfigDefaults(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, configCommand.usage)
		return exitOK
	}
	fmt.Fprintf(stderr, "weft config: unknown subcommand %q (valid: check, defaults)\n", args[0])
	return exitUsage
}

func runConfigCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(configCommand, stderr)
	noEnv := fs.Bool("noenv", false, "ignore the WEFT_ environment variables")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: weft config check [-noenv] FILE")
		return exitUsage
	}
	path := fs.Arg(0)
	opts := config.LoadOptions{Path: path, Log: slog.New(warningHandler{stderr})}
	if !*noEnv {
		opts.Environ = environ()
	}
	c, err := config.LoadWith(opts)
	if err != nil {
		problems := flatten(err)
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		noun := "problems"
		if len(problems) == 1 {
			noun = "problem"
		}
		fmt.Fprintf(stderr, "weft config check: %s: %d %s\n", path, len(problems), noun)
		return exitProblem
	}
	fmt.Fprintf(stdout, "# %s: valid\n", path)
	fmt.Fprint(stdout, c)
	return exitOK
}

func runConfigDefaults(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(configCommand, stderr)
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(stderr, "usage: weft config defaults")
		return exitUsage
	}
	c, err := config.LoadWith(config.LoadOptions{})
	if err != nil {
		// Only possible when the default scheduler is not linked in.
		for _, p := range flatten(err) {
			fmt.Fprintln(stderr, p)
		}
		return exitProblem
	}
	out, err := c.YAML()
	if err != nil {
		fmt.Fprintf(stderr, "weft config defaults: %v\n", err)
		return exitProblem
	}
	fmt.Fprint(stdout, "# The default weft composition: every key with its default value.\n")
	stdout.Write(out)
	return exitOK
}

// warningHandler prints each log record as a line "warning: message",
// for the load's warnings; the message already names what the attributes
// hold.
type warningHandler struct{ w io.Writer }

func (h warningHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h warningHandler) Handle(_ context.Context, r slog.Record) error {
	_, err := fmt.Fprintf(h.w, "warning: %s\n", r.Message)
	return err
}

func (h warningHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h warningHandler) WithGroup(string) slog.Handler      { return h }

// flatten takes joined errors apart, so each problem prints on its own line.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	return []error{err}
}
