package core_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weftrt/weft/core"
)

// rankedDriver is a driver module for the rank tests: it is never built.
func rankedDriver(name string, rank int, available error) core.Module {
	return core.DriverModule(name, name, nil, func(struct{}, core.DriverParams) (core.Driver, error) {
		return nil, errors.New("not built in this test")
	}, core.DefaultRank(rank), core.AvailableWhen(func() error { return available }))
}

func TestPreferredTakesTheHighestRankedAvailableModule(t *testing.T) {
	mods := []core.Module{
		rankedDriver("low", 10, nil),
		rankedDriver("high", 20, nil),
		rankedDriver("unranked", 0, nil),
		core.ClockModule("clock", "", nil, func(struct{}, core.ClockParams) (core.Clock, error) { return nil, nil }, core.DefaultRank(99)),
	}
	wantPreferred(t, mods, "high")
}

// wantPreferred stops the test unless Preferred picks the driver module
// named want out of mods.
func wantPreferred(t *testing.T, mods []core.Module, want string) {
	t.Helper()
	m, ok := core.Preferred(core.KindDriver, mods)
	if !ok {
		t.Fatalf("Preferred found no driver module, want %q", want)
	}
	if m.Name != want {
		t.Errorf("Preferred picked %q, want %q", m.Name, want)
	}
}

func TestPreferredFallsToTheNextRankWhenTheTopOneIsUnavailable(t *testing.T) {
	mods := []core.Module{
		rankedDriver("top", 30, errors.New("top needs plan9")),
		rankedDriver("next", 20, nil),
		rankedDriver("last", 10, nil),
	}
	wantPreferred(t, mods, "next")
}

func TestPreferredBreaksATieByName(t *testing.T) {
	wantPreferred(t, []core.Module{rankedDriver("b", 5, nil), rankedDriver("a", 5, nil)}, "a")
}

func TestPreferredFindsNothingWithoutARankedAvailableModule(t *testing.T) {
	m, ok := core.Preferred(core.KindDriver, []core.Module{
		rankedDriver("unranked", 0, nil),
		rankedDriver("elsewhere", 10, errors.New("elsewhere needs plan9")),
	})
	if ok {
		t.Errorf("Preferred picked %q, want nothing: no module is both ranked and available", m.Name)
	}
}

type typedConfig struct {
	N int `koanf:"n"`
}

func TestATypedModuleHandsItsBuildTheDecodedConfigAndTheParams(t *testing.T) {
	var got typedConfig
	var gotParams core.TimerParams
	m := core.TimerModule("typed", "", func() typedConfig { return typedConfig{N: 3} },
		func(c typedConfig, p core.TimerParams) (core.Timer, error) {
			got, gotParams = c, p
			return nil, errors.New("built")
		})
	newCfg := m.NewConfig()
	cfg, ok := newCfg.(*typedConfig)
	if !ok {
		t.Fatalf("NewConfig returned a %T, want a *typedConfig: a pointer to a copy of the defaults", newCfg)
	}
	if cfg.N != 3 {
		t.Errorf("NewConfig's N is %d, want the default 3", cfg.N)
	}
	cfg.N = 7
	_, err := m.BuildTimer(cfg, core.TimerParams{Shards: 4})
	wantBuildError(t, err)
	if got.N != 7 {
		t.Errorf("the build was handed N = %d, want 7", got.N)
	}
	if gotParams.Shards != 4 {
		t.Errorf("the build was handed Shards = %d, want 4", gotParams.Shards)
	}

	_, err = m.BuildTimer(nil, core.TimerParams{})
	wantBuildError(t, err)
	if got.N != 3 {
		t.Errorf("the build was handed N = %d with no configuration, want the default 3", got.N)
	}
}

// wantBuildError stops the test unless err is the error the typed test
// module's build function returns.
func wantBuildError(t *testing.T, err error) {
	t.Helper()
	if err == nil || err.Error() != "built" {
		t.Fatalf("BuildTimer returned the error %v, want the build function's \"built\"", err)
	}
}

func TestATypedModuleRefusesAForeignConfigurationWithAnError(t *testing.T) {
	m := core.TimerModule("typed", "", func() typedConfig { return typedConfig{} },
		func(typedConfig, core.TimerParams) (core.Timer, error) { return nil, nil })
	var err error
	wantNoPanic(t, "BuildTimer with a foreign configuration", func() { _, err = m.BuildTimer(&struct{}{}, core.TimerParams{}) })
	if err == nil {
		t.Fatalf("BuildTimer with a foreign configuration returned no error")
	}
	wantErrorContaining(t, err, `timer "typed": configuration is *struct {}`)
	wantNoPanic(t, "New with another kind's parameters", func() { _, err = m.New(nil, &core.DriverParams{}) })
	wantErrorContaining(t, err, `timer "typed": parameters are *core.DriverParams`)
}

// wantNoPanic runs f and reports, without stopping the test, a panic out
// of it; what names the call.
func wantNoPanic(t *testing.T, what string, f func()) {
	t.Helper()
	if r := panicOf(f); r != nil {
		t.Errorf("%s panicked with %v, want no panic", what, r)
	}
}

// panicOf runs f and returns what it panicked with, or nil.
func panicOf(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

// wantErrorContaining reports, without stopping the test, an err that is
// nil or whose message lacks substr.
func wantErrorContaining(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil {
		t.Errorf("got no error, want one containing %q", substr)
	} else if !strings.Contains(err.Error(), substr) {
		t.Errorf("got the error %q, want one containing %q", err, substr)
	}
}

func TestBuildingAModuleAsAnotherKindIsAnError(t *testing.T) {
	clock, err := core.Lookup(core.KindClock, "real")
	if err != nil {
		t.Fatalf("Lookup of the real clock: %v", err)
	}
	_, err = clock.BuildScheduler(nil, core.SchedulerParams{})
	if err == nil {
		t.Fatalf("BuildScheduler of a clock module returned no error")
	}
	wantErrorContaining(t, err, `clock "real"`)
}
