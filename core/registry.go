package core

import (
	"errors"
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

// Module describes a registered implementation of one kind. It is the
// low-level form of a registration: modules register with the typed
// helpers ([RegisterScheduler], [RegisterDriver], [RegisterTimer],
// [RegisterClock]), which fill in NewConfig and New so that the module
// itself handles only its own configuration and parameter types. A Module
// written by hand (a test's fake) is still accepted by [Register].
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
	// Rank declares the module's place in the default composition: when
	// a configuration names no module of this kind, the runtime takes the
	// available module of the highest positive Rank (see [Preferred]).
	// Zero, the default, means the module is used only when named.
	Rank int
	// New builds an instance from a validated configuration (nil when
	// NewConfig is nil) and returns a Scheduler, Driver, Timer or Clock
	// according to Kind. params is a *SchedulerParams, *DriverParams,
	// *TimerParams or *ClockParams likewise. Callers use the typed
	// BuildScheduler, BuildDriver, BuildTimer and BuildClock instead.
	New func(config any, params any) (any, error)
}

// A ModuleOption sets an optional field of a registration made with one
// of the typed helpers.
type ModuleOption func(*Module)

// AvailableWhen sets the module's Available check: available reports why
// the module cannot be built on this system, or nil when it can.
func AvailableWhen(available func() error) ModuleOption {
	return func(m *Module) { m.Available = available }
}

// DefaultRank sets the module's Rank: among the available modules of its
// kind, the one of highest positive rank is the default.
func DefaultRank(rank int) ModuleOption {
	return func(m *Module) { m.Rank = rank }
}

// typedModule builds the low-level Module of a typed registration. The
// configuration decodes into a copy of defaults() (nil defaults: the
// module takes no configuration and build receives the zero C), and New
// hands build the decoded C and the P the runtime passes. A configuration
// or parameters of another type (a caller that bypassed the runtime) is an
// error naming the module, not a panic.
func typedModule[C, P, R any](kind Kind, name, doc string, defaults func() C, build func(C, P) (R, error), opts []ModuleOption) Module {
	m := Module{Kind: kind, Name: name, Doc: doc}
	if defaults != nil {
		m.NewConfig = func() any { c := defaults(); return &c }
	}
	if build != nil {
		m.New = func(config, params any) (any, error) {
			var c C
			switch cfg := config.(type) {
			case *C:
				if cfg != nil {
					c = *cfg
				} else if defaults != nil {
					c = defaults()
				}
			case nil:
				if defaults != nil {
					c = defaults()
				}
			default:
				return nil, fmt.Errorf("weft: %s %q: configuration is %T, want %T", kind, name, config, (*C)(nil))
			}
			p, ok := params.(*P)
			if !ok || p == nil {
				return nil, fmt.Errorf("weft: %s %q: parameters are %T, want a non-nil %T", kind, name, params, (*P)(nil))
			}
			r, err := build(c, *p)
			if err != nil {
				return nil, err
			}
			return r, nil
		}
	}
	for _, o := range opts {
		o(&m)
	}
	return m
}

// SchedulerModule returns the Module of a scheduler: its configuration
// (the "scheduler" section when scheduler.kind is name) decodes into a
// copy of defaults(), and the runtime builds it with build. A nil defaults
// means the scheduler takes no configuration. Pass the result to
// [Register], or to a single load (config.LoadOptions.Modules).
func SchedulerModule[C any, S Scheduler](name, doc string, defaults func() C, build func(C, SchedulerParams) (S, error), opts ...ModuleOption) Module {
	return typedModule(KindScheduler, name, doc, defaults, build, opts)
}

// DriverModule returns the Module of an I/O driver; see SchedulerModule.
func DriverModule[C any, D Driver](name, doc string, defaults func() C, build func(C, DriverParams) (D, error), opts ...ModuleOption) Module {
	return typedModule(KindDriver, name, doc, defaults, build, opts)
}

// TimerModule returns the Module of a timer; see SchedulerModule.
func TimerModule[C any, T Timer](name, doc string, defaults func() C, build func(C, TimerParams) (T, error), opts ...ModuleOption) Module {
	return typedModule(KindTimer, name, doc, defaults, build, opts)
}

// ClockModule returns the Module of a clock; see SchedulerModule.
func ClockModule[C any, K Clock](name, doc string, defaults func() C, build func(C, ClockParams) (K, error), opts ...ModuleOption) Module {
	return typedModule(KindClock, name, doc, defaults, build, opts)
}

// RegisterScheduler registers a scheduler module from its package init:
// Register(SchedulerModule(...)). name is the value of scheduler.kind
// that selects it; build receives the decoded, validated configuration and
// the runtime's parameters.
func RegisterScheduler[C any, S Scheduler](name, doc string, defaults func() C, build func(C, SchedulerParams) (S, error), opts ...ModuleOption) {
	Register(SchedulerModule(name, doc, defaults, build, opts...))
}

// RegisterDriver registers an I/O driver module; see RegisterScheduler.
func RegisterDriver[C any, D Driver](name, doc string, defaults func() C, build func(C, DriverParams) (D, error), opts ...ModuleOption) {
	Register(DriverModule(name, doc, defaults, build, opts...))
}

// RegisterTimer registers a timer module; see RegisterScheduler.
func RegisterTimer[C any, T Timer](name, doc string, defaults func() C, build func(C, TimerParams) (T, error), opts ...ModuleOption) {
	Register(TimerModule(name, doc, defaults, build, opts...))
}

// RegisterClock registers a clock module; see RegisterScheduler.
func RegisterClock[C any, K Clock](name, doc string, defaults func() C, build func(C, ClockParams) (K, error), opts ...ModuleOption) {
	Register(ClockModule(name, doc, defaults, build, opts...))
}

// build calls m.New and checks that it returned a T, the interface of
// m's kind.
func build[T any](m Module, config, params any) (T, error) {
	var zero T
	if m.New == nil {
		return zero, fmt.Errorf("weft: %s %q has no build function", m.Kind, m.Name)
	}
	v, err := m.New(config, params)
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("weft: %s module %q returned %T, not a %T", m.Kind, m.Name, v, (*T)(nil))
	}
	return t, nil
}

// BuildScheduler builds m, a scheduler module, from config (what its
// NewConfig returned, decoded; nil for the defaults) and p. A module of
// another kind, or one whose New returns no Scheduler, is an error.
func (m Module) BuildScheduler(config any, p SchedulerParams) (Scheduler, error) {
	return build[Scheduler](m, config, &p)
}

// BuildDriver builds m, a driver module; see BuildScheduler.
func (m Module) BuildDriver(config any, p DriverParams) (Driver, error) {
	return build[Driver](m, config, &p)
}

// BuildTimer builds m, a timer module; see BuildScheduler.
func (m Module) BuildTimer(config any, p TimerParams) (Timer, error) {
	return build[Timer](m, config, &p)
}

// BuildClock builds m, a clock module; see BuildScheduler.
func (m Module) BuildClock(config any, p ClockParams) (Clock, error) {
	return build[Clock](m, config, &p)
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
	m    map[Kind]map[string]Module
	errs []error // the registrations refused, in order
}

// RegistrationError is a registration that Register refused: an unknown
// kind, an empty name, no build function, or a name already taken. The
// first module of a name stays registered.
type RegistrationError struct {
	Kind    Kind
	Name    string
	Problem string
}

func (e *RegistrationError) Error() string {
	return fmt.Sprintf("weft: registering %s module %q: %s", e.Kind, e.Name, e.Problem)
}

// Register makes a module available under its kind and name. Modules call
// it, or one of the typed helpers such as [RegisterScheduler], from their
// package init. A malformed registration (an unknown kind, an empty name,
// a nil New, a duplicate name) is not registered: it is recorded as a
// *RegistrationError, which [RegistrationErrors] returns and every
// configuration load reports, so a wiring mistake fails at start-up with a
// message naming the module.
func Register(m Module) {
	registry.Lock()
	defer registry.Unlock()
	refuse := func(problem string) {
		registry.errs = append(registry.errs, &RegistrationError{Kind: m.Kind, Name: m.Name, Problem: problem})
	}
	switch {
	case !validKind(m.Kind):
		refuse(fmt.Sprintf("unknown kind (valid: %s)", kindNames()))
		return
	case m.Name == "":
		refuse("the name is empty")
		return
	case m.New == nil:
		refuse("no build function")
		return
	}
	if registry.m == nil {
		registry.m = map[Kind]map[string]Module{}
	}
	byName := registry.m[m.Kind]
	if byName == nil {
		byName = map[string]Module{}
		registry.m[m.Kind] = byName
	}
	if first, dup := byName[m.Name]; dup {
		refuse(fmt.Sprintf("the name is already taken by another module (%s)", first.Doc))
		return
	}
	byName[m.Name] = m
}

// RegistrationErrors returns every registration Register refused, joined
// with errors.Join, or nil.
func RegistrationErrors() error {
	registry.RLock()
	defer registry.RUnlock()
	return errors.Join(registry.errs...)
}

// kindNames lists Kinds for messages.
func kindNames() string {
	names := make([]string, len(Kinds))
	for i, k := range Kinds {
		names[i] = string(k)
	}
	return strings.Join(names, ", ")
}

// Preferred returns the default module of kind among mods: the one of
// highest positive Rank whose Available check passes, the lower name first
// between equal ranks. ok is false when no module of kind qualifies.
func Preferred(kind Kind, mods []Module) (_ Module, ok bool) {
	var best Module
	for _, m := range mods {
		if m.Kind != kind || m.Rank <= 0 {
			continue
		}
		if m.Available != nil && m.Available() != nil {
			continue
		}
		if !ok || m.Rank > best.Rank || (m.Rank == best.Rank && m.Name < best.Name) {
			best, ok = m, true
		}
	}
	return best, ok
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
	RegisterClock("real", "the monotonic system clock", nil,
		func(struct{}, ClockParams) (Clock, error) { return NewRealClock(), nil },
		// The default clock: the virtual one is for tests that ask for it.
		DefaultRank(1))
}
