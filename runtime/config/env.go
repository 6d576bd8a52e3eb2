package config

import (
	"fmt"
	"log/slog"
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
// that names no key is not an error: another program, or another version
// of weft, may own it, and a runtime that never asked for it should still
// build. It is left out with a warning naming the closest valid variable.
// Those of a section whose kind did not resolve are skipped, as their keys
// are unknown.
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
	var known []string
	for _, vars := range bySection {
		known = append(known, slices.Collect(maps.Keys(vars))...)
	}
	slices.Sort(known)

	layer := map[string]any{}
	for _, v := range env {
		section := envSection(v.name)
		switch {
		case section == "":
			l.warnings = append(l.warnings, envWarning{name: v.name, closest: closest(v.name, known),
				why: "it names no section (runtime, driver, clock, timer or scheduler)"})
		case section != runtimeSection && !resolved[core.Kind(section)]:
		case v.name == EnvName(joinKey(section, kindKey)) && section != runtimeSection:
			// Applied by envKinds.
		default:
			key, ok := bySection[section][v.name]
			if !ok {
				why := "the runtime section has no such key"
				if section != runtimeSection {
					why = fmt.Sprintf("%s %q has no such key", section, c.selection(core.Kind(section)).Name)
				}
				l.warnings = append(l.warnings, envWarning{name: v.name, closest: closest(v.name, known), why: why})
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

// envWarning is a WEFT_ variable that names no key, which loading ignores.
type envWarning struct {
	name    string // the variable
	why     string // why it names no key
	closest string // the valid variable nearest to it by spelling
}

// log reports w on log.
func (w envWarning) log(log *slog.Logger) {
	log.Warn(fmt.Sprintf("weft: ignoring environment variable %s: %s; the closest valid variable is %s",
		w.name, w.why, w.closest), "variable", w.name, "closest", w.closest)
}

// closest returns the candidate nearest to name by edit distance, the
// first in order among equals; candidates is not empty.
func closest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		if d := editDistance(name, c); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
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
