package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

var modulesCommand = &command{
	name:    "modules",
	summary: "list the registered modules and their configuration keys",
	usage: `usage: weft modules [-kind KIND]

Modules lists every module linked into weft, by kind (driver, clock, timer,
scheduler), with its description and its configuration keys, their types
and defaults. The kind used when a configuration names none is marked
(default). For driver and timer, "none" is listed too: it runs without one.

A key K of a module is set in the module's section of a file
(scheduler: {kind: NAME, K: value}) or by the variable WEFT_<SECTION>_<K>.
`,
}

func init() { modulesCommand.run = runModules }

// noneDoc describes the "none" kind of the kinds that allow it.
var noneDoc = map[core.Kind]string{
	core.KindDriver: "no I/O driver: the runtime does no network or file I/O",
	core.KindTimer:  "no timer: sleeps and timeouts are unavailable",
}

func runModules(args []string, stdout, stderr io.Writer) int {
	fs := newFlags(modulesCommand, stderr)
	kindFlag := fs.String("kind", "", "list only the modules of this `kind`")
	if status, ok := parseFlags(fs, args); !ok {
		return status
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}
	kinds := core.Kinds
	if *kindFlag != "" {
		if !slices.Contains(core.Kinds, core.Kind(*kindFlag)) {
			fmt.Fprintf(stderr, "weft modules: unknown kind %q (valid: %s)\n", *kindFlag, kindList())
			return exitUsage
		}
		kinds = []core.Kind{core.Kind(*kindFlag)}
	}
	first := true
	entry := func(kind core.Kind, name, doc string, settings []config.Setting) {
		if !first {
			fmt.Fprintln(stdout)
		}
		first = false
		header := string(kind) + " " + name
		if config.DefaultKind(kind) == name {
			header += " (default)"
		}
		fmt.Fprintln(stdout, header)
		if doc != "" {
			fmt.Fprintf(stdout, "  %s\n", doc)
		}
		if len(settings) == 0 {
			fmt.Fprintln(stdout, "  no configuration keys")
			return
		}
		tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  KEY\tTYPE\tDEFAULT")
		for _, s := range settings {
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Key, s.Type, s.ValueString())
		}
		tw.Flush()
	}
	for _, kind := range kinds {
		if doc, ok := noneDoc[kind]; ok {
			entry(kind, config.None, doc, nil)
		}
		for _, name := range core.Names(kind) {
			m, err := core.Lookup(kind, name)
			if err != nil {
				continue // cannot happen: the name was just listed
			}
			var settings []config.Setting
			if m.NewConfig != nil {
				settings = config.SettingsOf(string(kind), m.NewConfig())
			}
			entry(kind, name, m.Doc, settings)
		}
	}
	return exitOK
}

// kindList lists the module kinds for messages.
func kindList() string {
	names := make([]string, len(core.Kinds))
	for i, k := range core.Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}
