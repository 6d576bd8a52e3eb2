// Command weft inspects and checks weft runtimes: the modules compiled in,
// configuration files, and the versions in use.
//
//	weft bench [--config FILE] [--json FILE] [--runs N] [ID ...]
//	                                 the benchmark workloads, weft against plain Go
//	weft version                     weft, module and Go versions
//	weft modules [-kind KIND]        registered modules and their keys
//	weft config check [-noenv] FILE  validate a configuration file
//	weft config defaults             the default composition as YAML
//	weft help [COMMAND]              usage
//
// Exit status: 0 on success, 1 when the command ran and found a problem (an
// invalid configuration), 2 on a usage error.
//
// # Adding a command
//
// Each command lives in its own file as a *command value and is listed in
// commands below; run dispatches on the first argument. A command parses
// its own flags with the flag package and writes only to the writers it is
// given, so tests run it in-process through run.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/weftrt/weft/tools/internal/echo"

	// The facade registers every built-in module, so weft knows them all.
	_ "github.com/weftrt/weft"
)

// Exit statuses.
const (
	exitOK      = 0 // the command succeeded
	exitProblem = 1 // the command ran and found a problem
	exitUsage   = 2 // the command line was wrong
)

// command is one subcommand of weft.
type command struct {
	name    string // the word after weft
	summary string // one line for the command list
	usage   string // the synopsis and description shown by help
	// run executes the command with the arguments after its name and
	// returns the exit status.
	run func(args []string, stdout, stderr io.Writer) int
}

// commands lists the subcommands in the order help shows them. New
// commands (bench, plugins, sim, ...) are added here.
var commands = []*command{
	runCommand,
	benchCommand,
	versionCommand,
	modulesCommand,
	configCommand,
	pluginsCommand,
}

func main() {
	// W8 and W9 run their echo servers in a child process: this
	// executable, started again.
	echo.ServeChildIfRequested()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the weft command line args (without the program name) and
// returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return exitUsage
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return help(rest, stdout, stderr)
	}
	if c := lookup(name); c != nil {
		return c.run(rest, stdout, stderr)
	}
	fmt.Fprintf(stderr, "weft: unknown command %q\n\n", name)
	printUsage(stderr)
	return exitUsage
}

// lookup returns the command called name, or nil.
func lookup(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// help prints the usage of weft, or of the command named in args.
func help(args []string, stdout, stderr io.Writer) int {
	switch len(args) {
	case 0:
		printUsage(stdout)
		return exitOK
	case 1:
		if c := lookup(args[0]); c != nil {
			fmt.Fprint(stdout, c.usage)
			return exitOK
		}
		fmt.Fprintf(stderr, "weft help: unknown command %q\n", args[0])
		return exitUsage
	}
	fmt.Fprintln(stderr, "usage: weft help [COMMAND]")
	return exitUsage
}

// printUsage prints the list of commands.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "weft inspects and checks weft runtimes.\n\nUsage:\n\n\tweft COMMAND [ARGUMENTS]\n\nCommands:\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "\t%s\t%s\n", c.name, c.summary)
	}
	fmt.Fprintf(tw, "\t%s\t%s\n", "help", "show the usage of weft or of a command")
	tw.Flush()
	fmt.Fprint(w, "\nRun 'weft help COMMAND' for the details of a command.\n")
}

// newFlags returns a flag set for a command that reports errors to stderr
// with the command's usage.
func newFlags(c *command, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("weft "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, c.usage)
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
		if b.Len() > 0 {
			fmt.Fprintf(stderr, "\nFlags:\n%s", b.String())
		}
	}
	return fs
}

// parseFlags parses args into fs. It returns the exit status to stop with
// and false when the command must not go on: a bad flag (usage) or -h
// (success, after the usage).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	switch err := fs.Parse(args); {
	case err == nil:
		return exitOK, true
	case errors.Is(err, flag.ErrHelp):
		return exitOK, false
	default:
		return exitUsage, false
	}
}
