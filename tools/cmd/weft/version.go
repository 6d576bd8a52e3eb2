package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"
)

// Version is the version of the weft command and of the module set it is
// released with (see versions.yaml).
const Version = "0.1.0"

// modulePrefix is the path prefix of weft's own modules.
const modulePrefix = "github.com/weftrt/weft"

var versionCommand = &command{
	name:    "version",
	summary: "print the versions of weft, its modules and Go",
	usage: `usage: weft version

Version prints the version of the weft command, the version of each weft
module built into it (from the binary's build information; "(devel)" and
a local path for a module replaced by a directory), and the Go version.
`,
}

func init() { versionCommand.run = runVersion }

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(versionCommand, stderr)
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	fmt.Fprintf(stdout, "weft %s\n", Version)
	fmt.Fprintf(stdout, "go   %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return exitOK
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	printed := false
	for _, m := range append([]*debug.Module{&info.Main}, info.Deps...) {
		if m.Path != modulePrefix && !strings.HasPrefix(m.Path, modulePrefix+"/") {
			continue
		}
		if !printed {
			fmt.Fprintln(stdout, "modules:")
			printed = true
		}
		fmt.Fprintf(tw, "  %s\t%s\n", m.Path, moduleVersion(m))
	}
	tw.Flush()
	return exitOK
}

// moduleVersion formats a module's version, following a replacement.
func moduleVersion(m *debug.Module) string {
	v := m.Version
	if v == "" {
		v = "(devel)"
	}
	if r := m.Replace; r != nil {
		if r.Version == "" || r.Version == "(devel)" {
			return v + " => " + r.Path
		}
		return v + " => " + r.Path + " " + r.Version
	}
	return v
}
