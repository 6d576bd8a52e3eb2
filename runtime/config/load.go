package config

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"

	"github.com/weftrt/weft/core"
)

// LoadOptions says where a composition comes from.
type LoadOptions struct {
	// Path is the configuration file; "" loads none.
	Path string
	// Environ holds "NAME=value" entries as os.Environ returns them; the
	// WEFT_ ones are applied. Nil applies no environment.
	Environ []string
	// Overrides are applied last, over the environment. Keys are dotted
	// ("scheduler.workers") or nested maps; values are what a file would
	// hold or Go values of the field's type (a time.Duration, a []string).
	Overrides map[string]any
	// Modules are extra modules visible to this load only, looked up
	// before the registry. A program (or the conformance kit) uses them to
	// compose a module it does not want to register process-wide.
	Modules []core.Module
	// Log receives the load's warnings: each WEFT_ variable that names no
	// key, which is ignored. Nil means slog.Default().
	Log *slog.Logger
}

// Load loads the composition from the file at path ("" for none) and the
// process environment. See LoadWith.
func Load(path string) (*Composition, error) {
	return LoadWith(LoadOptions{Path: path, Environ: os.Environ()})
}

// LoadWith merges the defaults, the file, the environment and the overrides
// of opts, decodes and validates the result, and returns a new Composition.
// LoadWith(LoadOptions{}) is the default composition.
//
// A module registered wrongly stops loading with the
// *core.RegistrationError values of core.RegistrationErrors, and a file
// that cannot be read or parsed with a *FileError.
// Otherwise every problem found is reported: the error is an errors.Join of
// *core.ConfigError values, and the Composition is nil. A WEFT_ variable
// that names no key is no problem: it is ignored with a warning on
// opts.Log.
func LoadWith(opts LoadOptions) (*Composition, error) {
	l := &loader{
		extra: opts.Modules,
		k:     koanf.New("."),
		dec:   &decoder{origin: map[string]string{}, kindNotes: map[string]string{}},
	}
	defer l.warn(opts.Log)
	// A module registered wrongly fails every load, before anything else.
	if err := core.RegistrationErrors(); err != nil {
		return nil, err
	}
	// Layer 1: defaults.
	l.merge(l.defaultTree())
	// Layer 2: the file.
	if opts.Path != "" {
		m, err := readFile(opts.Path)
		if err != nil {
			return nil, err
		}
		l.merge(l.checkSections(m))
	}
	// Layer 3, first pass: the environment's kinds, so that the keys of the
	// chosen modules are known before the other variables are matched.
	env := weftEnviron(opts.Environ)
	l.merge(l.envKinds(env))
	// Layer 4: the overrides, which may choose a module too.
	var overrides map[string]any
	if len(opts.Overrides) > 0 {
		overrides = l.checkSections(unflatten(opts.Overrides))
		for _, key := range leafKeys("", overrides) {
			l.dec.origin[key] = "overrides"
		}
		l.merge(overrides)
	}

	c := &Composition{}
	resolved := l.resolveKinds(c)
	// Layer 3, second pass: the module keys in the environment, then the
	// overrides again so they stay on top.
	l.merge(l.envKeys(env, c, resolved))
	l.merge(overrides)

	tree := l.k.Raw()
	c.Runtime = DefaultRuntime()
	if table, ok := tree[runtimeSection].(map[string]any); ok {
		l.dec.decodeStruct(runtimeSection, table, reflect.ValueOf(&c.Runtime).Elem())
	}
	l.dec.validation(runtimeSection, c.Runtime.Validate())
	for _, kind := range core.Kinds {
		if resolved[kind] {
			table, _ := tree[string(kind)].(map[string]any)
			l.decodeModule(kind, table, c.selection(kind))
		}
	}
	if len(l.dec.errs) > 0 {
		// Group the problems by section, in file order; within a section
		// they stay in the order found (kind, environment, keys, Validate).
		slices.SortStableFunc(l.dec.errs, func(a, b error) int {
			return sectionRank(a) - sectionRank(b)
		})
		return nil, errors.Join(l.dec.errs...)
	}
	return c, nil
}

// sectionRank orders problems: those outside every section first, then by
// the position of their section in the file (runtime, then core.Kinds).
func sectionRank(err error) int {
	ce, ok := err.(*core.ConfigError)
	if !ok {
		return -1
	}
	return slices.Index(sections(), sectionOf(ce.Key))
}

// sectionOf returns the top-level section of a dotted key.
func sectionOf(key string) string {
	section, _, _ := strings.Cut(key, ".")
	return section
}

// loader carries one LoadWith call.
type loader struct {
	extra    []core.Module
	k        *koanf.Koanf
	dec      *decoder
	warnings []envWarning
}

// warn logs the load's warnings on log, or slog.Default() when log is nil.
func (l *loader) warn(log *slog.Logger) {
	if len(l.warnings) == 0 {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	for _, w := range l.warnings {
		w.log(log)
	}
}

// merge merges a layer over the tree.
func (l *loader) merge(layer map[string]any) {
	if len(layer) == 0 {
		return
	}
	// Loading an in-memory map cannot fail.
	_ = l.k.Load(confmap.Provider(layer, ""), nil)
}

// defaultTree is the defaults layer: the runtime's defaults and each
// section's default kind. Modules' defaults come from their NewConfig.
func (l *loader) defaultTree() map[string]any {
	t := map[string]any{runtimeSection: toTree(reflect.ValueOf(DefaultRuntime()))}
	for _, kind := range core.Kinds {
		section := map[string]any{}
		if name := defaultKind(kind, l.extra); name != None || noneAllowed(kind) {
			// A scheduler or clock with no default is left unset, and
			// resolveKinds says so at its kind key.
			section[kindKey] = name
		}
		t[string(kind)] = section
	}
	return t
}

// checkSections reports unknown top-level sections and sections that are
// not tables, and returns the layer without them, so that a bad layer
// cannot replace a good section of an earlier one. A null section is
// dropped silently: it sets nothing.
func (l *loader) checkSections(layer map[string]any) map[string]any {
	valid := sections()
	slices.Sort(valid)
	out := make(map[string]any, len(layer))
	for _, name := range slices.Sorted(maps.Keys(layer)) {
		v := layer[name]
		switch {
		case !slices.Contains(valid, name):
			l.dec.fail(name, "unknown section", valid, nil)
		case v == nil:
		default:
			if _, ok := v.(map[string]any); !ok {
				l.dec.fail(name, "want a table of keys, got "+describe(v), nil, nil)
				continue
			}
			out[name] = v
		}
	}
	return out
}

// resolveKinds looks up the module named by each section's kind and fills
// in the selection's Name and Module. It reports which kinds resolved; the
// keys of a section whose kind did not resolve cannot be checked and are
// left alone.
func (l *loader) resolveKinds(c *Composition) map[core.Kind]bool {
	resolved := map[core.Kind]bool{}
	for _, kind := range core.Kinds {
		key := joinKey(string(kind), kindKey)
		valid := l.available(kind)
		v := l.k.Get(key)
		if v == nil {
			v = defaultKind(kind, l.extra)
			if v == None && !noneAllowed(kind) {
				problem := fmt.Sprintf("no %s module is registered; import one, or the weft package which imports them all", kind)
				if len(l.names(kind)) > 0 {
					problem = fmt.Sprintf("none of the %s modules linked is a default on this system; name one", kind)
				}
				l.dec.fail(key, problem, valid, nil)
				continue
			}
		}
		name, ok := v.(string)
		if !ok {
			l.dec.fail(key, "want a string, got "+describe(v), valid, nil)
			continue
		}
		sel := c.selection(kind)
		sel.Name = name
		if o := l.dec.origin[key]; strings.HasPrefix(o, envPrefix) {
			// Every other problem in the section is about the keys of a
			// module the environment chose; say so.
			l.dec.kindNotes[string(kind)] = fmt.Sprintf(" (%s is %q, set by %s)", key, name, o)
		}
		if name == None {
			if !noneAllowed(kind) {
				l.dec.fail(key, fmt.Sprintf("a runtime needs a %s; %q is allowed for driver and timer only", kind, None), valid, nil)
				continue
			}
			resolved[kind] = true
			continue
		}
		m, err := l.lookup(kind, name)
		if err != nil {
			problem := fmt.Sprintf("unknown %s %q", kind, name)
			if path, ok := optInModules[name]; ok {
				problem += fmt.Sprintf(": the %q module is not linked into this program; enable it with import _ %q", name, path)
			} else if len(l.names(kind)) == 0 {
				problem += fmt.Sprintf(": no %s module is registered; import one, or the weft package which imports the built-in ones", kind)
			}
			l.dec.fail(key, problem, valid, err)
			continue
		}
		sel.Module = m
		resolved[kind] = true
		if m.Available == nil {
			continue
		}
		if err := m.Available(); err != nil {
			// The section's keys are still checked, so that every
			// problem is reported.
			l.dec.fail(key, fmt.Sprintf("%s %q is not available on this system: %v", kind, name, err), valid, err)
		}
	}
	return resolved
}

// available lists the names of kind whose modules can be built on this
// system, sorted, then None where it is allowed.
func (l *loader) available(kind core.Kind) []string {
	var names []string
	for _, name := range l.names(kind) {
		if m, err := l.lookup(kind, name); err == nil && (m.Available == nil || m.Available() == nil) {
			names = append(names, name)
		}
	}
	if noneAllowed(kind) {
		names = append(names, None)
	}
	return names
}

// decodeModule decodes a module section into a fresh configuration of the
// selected module and validates it.
func (l *loader) decodeModule(kind core.Kind, table map[string]any, sel *Selection) {
	section := string(kind)
	if sel.Name == None || sel.Module.NewConfig == nil {
		// Only kind is valid; any other key is reported as unknown.
		l.dec.decodeStruct(section, table, reflect.ValueOf(&struct{}{}).Elem(), kindKey)
		return
	}
	cfg := sel.Module.NewConfig()
	rv := reflect.ValueOf(cfg)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || !isTable(rv.Elem().Type()) {
		l.dec.fail(section, fmt.Sprintf("%s %q: NewConfig returned %T, want a non-nil pointer to a struct (a bug in the module)",
			kind, sel.Name, cfg), nil, nil)
		return
	}
	l.dec.decodeStruct(section, table, rv.Elem(), kindKey)
	if v, ok := cfg.(interface{ Validate() error }); ok {
		l.dec.validation(section, v.Validate())
	}
	sel.Config = cfg
}

// unflatten turns the overrides' dotted keys into a fresh tree. Keys are
// applied in sorted order and tables merge key by key, so "runtime.name"
// and a "runtime" table both take effect whatever the map order.
func unflatten(flat map[string]any) map[string]any {
	tree := map[string]any{}
	var put func(dst map[string]any, key string, v any)
	put = func(dst map[string]any, key string, v any) {
		parts := strings.Split(key, ".")
		for _, p := range parts[:len(parts)-1] {
			sub, ok := dst[p].(map[string]any)
			if !ok {
				sub = map[string]any{}
				dst[p] = sub
			}
			dst = sub
		}
		last := parts[len(parts)-1]
		table, ok := v.(map[string]any)
		if !ok {
			dst[last] = v
			return
		}
		sub, ok := dst[last].(map[string]any)
		if !ok {
			sub = map[string]any{}
			dst[last] = sub
		}
		for _, k := range slices.Sorted(maps.Keys(table)) {
			put(sub, k, table[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(flat)) {
		put(tree, k, flat[k])
	}
	return tree
}

// leafKeys returns the dotted keys of the leaves of a tree, sorted.
func leafKeys(prefix string, tree map[string]any) []string {
	var keys []string
	for _, k := range slices.Sorted(maps.Keys(tree)) {
		key := joinKey(prefix, k)
		if sub, ok := tree[k].(map[string]any); ok {
			keys = append(keys, leafKeys(key, sub)...)
			continue
		}
		keys = append(keys, key)
	}
	return keys
}

// optInModules maps the name of a module that the weft package does not
// link to the package whose import registers it, so that a configuration
// naming it in a program without it says which import enables it. The
// table holds names only: core imports none of these packages.
var optInModules = map[string]string{
	// The plugin timer, scheduler and driver (plugins.ModuleName): they
	// bring go-plugin, gRPC and protobuf, which a program links only when
	// it asks for them.
	"plugin": "github.com/weftrt/weft/plugins",
}

// lookup finds a module among the load's extra modules, then in the
// registry.
func (l *loader) lookup(kind core.Kind, name string) (core.Module, error) {
	for _, m := range l.extra {
		if m.Kind == kind && m.Name == name {
			return m, nil
		}
	}
	return core.Lookup(kind, name)
}

// names lists the registered names of kind plus the load's extra ones,
// sorted.
func (l *loader) names(kind core.Kind) []string {
	names := core.Names(kind)
	for _, m := range l.extra {
		if m.Kind == kind && !slices.Contains(names, m.Name) {
			names = append(names, m.Name)
		}
	}
	slices.Sort(names)
	return names
}
