package main

import (
	"fmt"
	"io"

	"github.com/weftrt/weft/core/config"
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
standard error and exits 1.

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
	opts := config.LoadOptions{Path: path}
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
