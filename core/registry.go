package core

import (
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
)

// Kind is a category of pluggable module.
type Kind string

// The kinds of module a runtime is composed of.
const (
	KindScheduler Kind = "scheduler"
	KindDriver    Kind = "driver"
	KindTimer     Kind = "timer"
	KindClock     Kind = "clock"
)

// Kinds lists every module kind, in composition order.
var Kinds = []Kind{KindDriver, KindClock, KindTimer, KindScheduler}

// Module describes a registered implementation of one kind.
//
// Configuration: NewConfig returns a pointer to a fresh configuration
// struct holding the module's defaults, its fields tagged `koanf:"key"`. The
// runtime decodes the module's configuration subtree into it (unknown keys
// and wrong types are errors that name the key), then calls its
// `Validate() error` method when it has one. A module without options
// leaves NewConfig nil.
type Module struct {
	Kind      Kind
	Name      string
	Doc       string // one line: what the module is
	NewConfig func() any
	// Available, when set, reports whether the module can be built on
	// this system at all (an OS facility it needs, such as epoll or
	// kqueue); nil means it always can. Loading a configuration that
	// selects the module calls it and reports its error at the section's
	// kind key, so that checking a configuration and building it agree.
	Available func() error
	// New builds an instance from a validated configuration (nil when
	// NewConfig is nil) and returns a Scheduler, Driver, Timer or Clock
	// according to Kind. params is a *SchedulerParams, *DriverParams,
	// *TimerParams or *ClockParams likewise.
	New func(config any, params any) (any, error)
}

// TimerParams is what the runtime hands a timer module.
type TimerParams struct {
	Clock Clock
	// Shards is a hint: the number of workers that will use the timer.
	Shards int
	// Log is the runtime's logger, for what a timer reports on its own (a
	// plugin's output). Nil means slog.Default().
	Log *slog.Logger
}

// ClockParams is what the runtime hands a clock module.
type ClockParams struct{}

var registry struct {
	sync.RWMutex
	m map[Kind]map[string]Module
}

// Register makes a module available under its kind and name. Modules call it
// from their package init. It panics on an unknown kind, an empty name, a nil
// New or a duplicate, so a wiring mistake fails at start-up.
func Register(m Module) {
	if !validKind(m.Kind) {
		panic(fmt.Sprintf("weft: Register: unknown module kind %q", m.Kind))
	}
	if m.Name == "" || m.New == nil {
		panic(fmt.Sprintf("weft: Register: %s module needs a name and a New function", m.Kind))
	}
	registry.Lock()
	defer registry.Unlock()
	if registry.m == nil {
		registry.m = map[Kind]map[string]Module{}
	}
	byName := registry.m[m.Kind]
	if byName == nil {
		byName = map[string]Module{}
		registry.m[m.Kind] = byName
	}
	if _, dup := byName[m.Name]; dup {
		panic(fmt.Sprintf("weft: Register called twice for %s %q", m.Kind, m.Name))
	}
	byName[m.Name] = m
}

func validKind(k Kind) bool {
	for _, x := range Kinds {
		if x == k {
			return true
		}
	}
	return false
}

// UnknownModuleError is returned by Lookup for a name nobody registered.
type UnknownModuleError struct {
	Kind  Kind
	Name  string
	Valid []string // registered names of that kind, sorted
}

func (e *UnknownModuleError) Error() string {
	valid := "none registered"
	if len(e.Valid) > 0 {
		valid = "valid: " + strings.Join(e.Valid, ", ")
	}
	return fmt.Sprintf("weft: unknown %s kind %q (%s)", e.Kind, e.Name, valid)
}

// Lookup returns the module registered under kind and name, or an
// *UnknownModuleError listing the registered names.
func Lookup(kind Kind, name string) (Module, error) {
	registry.RLock()
	m, ok := registry.m[kind][name]
	registry.RUnlock()
	if !ok {
		return Module{}, &UnknownModuleError{Kind: kind, Name: name, Valid: Names(kind)}
	}
	return m, nil
}

// Names returns the sorted names registered for kind.
func Names(kind Kind) []string {
	registry.RLock()
	defer registry.RUnlock()
	names := make([]string, 0, len(registry.m[kind]))
	for n := range registry.m[kind] {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Modules returns every registered module, sorted by kind then name.
func Modules() []Module {
	var out []Module
	for _, k := range Kinds {
		for _, n := range Names(k) {
			m, _ := Lookup(k, n)
			out = append(out, m)
		}
	}
	return out
}

func init() {
	Register(Module{
		Kind: KindClock,
		Name: "real",
		Doc:  "the monotonic system clock",
		New:  func(any, any) (any, error) { return NewRealClock(), nil },
	})
}
