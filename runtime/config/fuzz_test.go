package config_test

import (
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

// The fuzz targets feed a configuration file of each format, and WEFT_
// variables (one "NAME=value" a line), to the loader, over the fake modules
// of helpers_test.go, which have a field of every supported type. The
// property: loading never panics, and it either returns a composition that
// its own YAML loads back to, or fails with a *config.FileError (a file
// that does not parse) or with *core.ConfigError values that each name a
// key.

func FuzzLoadYAML(f *testing.F) { fuzzLoad(f, ".yaml") }
func FuzzLoadTOML(f *testing.F) { fuzzLoad(f, ".toml") }
func FuzzLoadJSON(f *testing.F) { fuzzLoad(f, ".json") }

// fuzzLoad fuzzes loading a file with the extension ext and an
// environment. The seed corpus is in testdata/fuzz/<target>: valid files,
// files with every kind of problem, broken files, and environments that
// set keys, choose a module, misspell a variable or give bad values.
func fuzzLoad(f *testing.F, ext string) {
	dir := f.TempDir()
	quiet := slog.New(slog.DiscardHandler)
	f.Fuzz(func(t *testing.T, file []byte, env string) {
		path := filepath.Join(dir, "weft"+ext)
		if err := os.WriteFile(path, file, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := config.LoadWith(config.LoadOptions{Path: path, Environ: strings.Split(env, "\n"), Log: quiet})
		if err != nil {
			if c != nil {
				t.Fatalf("a failed load returned a composition: %v", err)
			}
			checkLoadError(t, err)
			return
		}
		checkRoundTrip(t, c, dir)
	})
}

// checkLoadError checks that err is a *config.FileError, or a join of
// *core.ConfigError values each naming a key.
func checkLoadError(t *testing.T, err error) {
	t.Helper()
	var fe *config.FileError
	if errors.As(err, &fe) {
		if fe.Problem == "" || !strings.Contains(err.Error(), fe.Path) {
			t.Fatalf("a file error that does not say what is wrong: %v", err)
		}
		return
	}
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	if len(errs) == 0 {
		t.Fatalf("an empty joined error: %v", err)
	}
	for _, e := range errs {
		ce, ok := e.(*core.ConfigError)
		if !ok {
			t.Fatalf("a problem that is a %T, not a *core.ConfigError: %v", e, e)
		}
		if ce.Key == "" || ce.Problem == "" {
			t.Fatalf("a problem without its key or what is wrong: %#v", ce)
		}
		if !strings.Contains(ce.Error(), strconv.Quote(ce.Key)) {
			t.Fatalf("the message does not name the key %q: %v", ce.Key, ce)
		}
	}
}

// checkRoundTrip checks that c's YAML loads back, alone, to c.
func checkRoundTrip(t *testing.T, c *config.Composition, dir string) {
	t.Helper()
	out, err := c.YAML()
	if err != nil {
		t.Fatalf("YAML of a loaded composition: %v", err)
	}
	path := filepath.Join(dir, "again.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	again, err := config.LoadWith(config.LoadOptions{Path: path})
	if err != nil {
		t.Fatalf("the composition's YAML does not load: %v\n%s", err, out)
	}
	if !same(reflect.ValueOf(c.Runtime), reflect.ValueOf(again.Runtime)) {
		t.Fatalf("runtime: loaded %+v, its YAML loads %+v\n%s", c.Runtime, again.Runtime, out)
	}
	for _, kind := range core.Kinds {
		a, b := c.Selection(kind), again.Selection(kind)
		if a.Name != b.Name || !same(reflect.ValueOf(a.Config), reflect.ValueOf(b.Config)) {
			t.Fatalf("%s: loaded %q %+v, its YAML loads %q %+v\n%s", kind, a.Name, a.Config, b.Name, b.Config, out)
		}
	}
}

// same reports whether two configuration values hold the same settings:
// reflect.DeepEqual, except that a nil and an empty list are the same
// setting, and so are two NaNs.
func same(a, b reflect.Value) bool {
	if !a.IsValid() || !b.IsValid() {
		return a.IsValid() == b.IsValid()
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return same(a.Elem(), b.Elem())
	case reflect.Struct:
		for i := range a.NumField() {
			if !same(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !same(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || (math.IsNaN(x) && math.IsNaN(y))
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}
