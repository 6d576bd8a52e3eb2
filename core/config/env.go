package config

import (
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/weftrt/weft/core"
)

// envPrefix starts the name of every weft environment variable.
const envPrefix = "WEFT_"

// envVar is one WEFT_ variable of the environment.
type envVar struct{ name, value string }

// weftEnviron picks the WEFT_ variables out of "NAME=value" entries, sorted
// by name. A name given twice takes its last value.
func weftEnviron(environ []string) []envVar {
	m := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if ok && strings.HasPrefix(name, envPrefix) {
			m[name] = value
		}
	}
	vars := make([]envVar, 0, len(m))
	for _, name := range slices.Sorted(maps.Keys(m)) {
		vars = append(vars, envVar{name, m[name]})
	}
	return vars
}

// EnvName returns the environment variable that sets a dotted key: WEFT_
// and the key upper-cased with dots (and dashes) turned into underscores,
// so runtime.blocking.max_threads is WEFT_RUNTIME_BLOCKING_MAX_THREADS.
func EnvName(key string) string {
	return envPrefix + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
}

// envKinds returns the layer of the WEFT_<KIND>_KIND variables.
func (l *loader) envKinds(env []envVar) map[string]any {
	layer := map[string]any{}
	for _, kind := range core.Kinds {
		key := joinKey(string(kind), kindKey)
		name := EnvName(key)
		for _, v := range env {
			if v.name == name {
				layer[string(kind)] = map[string]any{kindKey: v.value}
				l.dec.origin[key] = name
			}
		}
	}
	return layer
}

// envKeys returns the layer of the other WEFT_ variables, matched against
// the keys that exist now that each section's module is known. A variable
// that names no key is reported with the variables of its section; those of
// a section whose kind did not resolve are skipped, as their keys are
// unknown.
func (l *loader) envKeys(env []envVar, c *Composition, resolved map[core.Kind]bool) map[string]any {
	// The variables of each section, mapped to their dotted keys.
	bySection := map[string]map[string]string{}
	add := func(section string, keys []string) {
		if bySection[section] == nil {
			bySection[section] = map[string]string{}
		}
		for _, key := range keys {
			bySection[section][EnvName(key)] = key
		}
	}
	add(runtimeSection, typeKeys(runtimeSection, reflect.TypeFor[RuntimeConfig]()))
	for _, kind := range core.Kinds {
		section := string(kind)
		add(section, []string{joinKey(section, kindKey)})
		if m := c.selection(kind).Module; m.NewConfig != nil {
			if t := reflect.TypeOf(m.NewConfig()); t != nil && t.Kind() == reflect.Pointer && isTable(t.Elem()) {
				add(section, typeKeys(section, t.Elem()))
			}
		}
	}

	layer := map[string]any{}
	for _, v := range env {
		section := envSection(v.name)
		switch {
		case section == "":
			var valid []string
			for _, s := range sections() {
				valid = append(valid, EnvName(s)+"_*")
			}
			slices.Sort(valid)
			l.dec.fail(v.name, "unknown environment variable: it names no section", valid, nil)
		case section != runtimeSection && !resolved[core.Kind(section)]:
		case v.name == EnvName(joinKey(section, kindKey)) && section != runtimeSection:
			// Applied by envKinds.
		default:
			key, ok := bySection[section][v.name]
			if !ok {
				l.dec.fail(v.name, "unknown environment variable", slices.Sorted(maps.Keys(bySection[section])), nil)
				continue
			}
			setPath(layer, key, v.value)
			if _, set := l.dec.origin[key]; !set {
				l.dec.origin[key] = v.name
			}
		}
	}
	return layer
}

// envSection returns the section a variable belongs to by its prefix, or
// "" when it names none.
func envSection(name string) string {
	for _, s := range sections() {
		if strings.HasPrefix(name, EnvName(s)+"_") {
			return s
		}
	}
	return ""
}

// typeKeys returns the dotted keys of the leaves of a configuration struct
// type, in declaration order.
func typeKeys(prefix string, t reflect.Type) []string {
	var keys []string
	for _, f := range fieldsOf(t) {
		key := joinKey(prefix, f.key)
		if isTable(f.typ) {
			keys = append(keys, typeKeys(key, f.typ)...)
			continue
		}
		keys = append(keys, key)
	}
	return keys
}

// setPath sets a dotted key in a nested tree, creating tables on the way.
func setPath(tree map[string]any, key string, value any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := tree[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			tree[p] = sub
		}
		tree = sub
	}
	tree[parts[len(parts)-1]] = value
}
