package config

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// sample has a field of every kind the decoder supports.
type sample struct {
	S     string          `koanf:"s"`
	B     bool            `koanf:"b"`
	I     int             `koanf:"i"`
	I8    int8            `koanf:"i8"`
	I64   int64           `koanf:"i64"`
	U     uint            `koanf:"u"`
	U8    uint8           `koanf:"u8"`
	F32   float32         `koanf:"f32"`
	F     float64         `koanf:"f"`
	D     time.Duration   `koanf:"d"`
	Ds    []time.Duration `koanf:"ds"`
	Ss    []string        `koanf:"ss"`
	Addr  netip.Addr      `koanf:"addr"` // decodes itself from text
	Mode  mode            `koanf:"mode"` // a named string
	Inner struct {
		N int `koanf:"n"`
	} `koanf:"inner"`
	M       map[string]int `koanf:"m"` // not supported
	Skipped int            `koanf:"-"`
	hidden  int            // unexported fields are never keys
}

type mode string

// decode decodes tree into a fresh sample and returns it with the problems.
func decode(tree map[string]any) (sample, []*core.ConfigError) {
	var s sample
	d := &decoder{origin: map[string]string{}}
	d.decodeStruct("x", tree, reflect.ValueOf(&s).Elem())
	var errs []*core.ConfigError
	for _, e := range d.errs {
		errs = append(errs, e.(*core.ConfigError))
	}
	return s, errs
}

// messages returns the problems' messages keyed by their keys.
func messages(errs []*core.ConfigError) map[string]string {
	m := map[string]string{}
	for _, e := range errs {
		m[e.Key] = e.Error()
	}
	return m
}

func TestDecoderConvertsStringsAsTheEnvironmentGivesThem(t *testing.T) {
	s, errs := decode(map[string]any{
		"s": "text", "b": "true", "i": "-4", "i8": "127", "i64": "9000000000", "u": "7", "u8": "255",
		"f32": "1.5", "f": "2.25", "d": "1m30s", "ds": "1s, 2ms", "ss": "a,b , c",
		"addr": "10.0.0.1", "mode": "fast", "inner": map[string]any{"n": "3"},
	})
	require.Empty(t, errs)
	assert.Equal(t, "text", s.S)
	assert.True(t, s.B)
	assert.Equal(t, -4, s.I)
	assert.Equal(t, int8(127), s.I8)
	assert.Equal(t, int64(9000000000), s.I64)
	assert.Equal(t, uint(7), s.U)
	assert.Equal(t, uint8(255), s.U8)
	assert.Equal(t, float32(1.5), s.F32)
	assert.Equal(t, 2.25, s.F)
	assert.Equal(t, 90*time.Second, s.D)
	assert.Equal(t, []time.Duration{time.Second, 2 * time.Millisecond}, s.Ds)
	assert.Equal(t, []string{"a", "b", "c"}, s.Ss)
	assert.Equal(t, netip.MustParseAddr("10.0.0.1"), s.Addr)
	assert.Equal(t, mode("fast"), s.Mode)
	assert.Equal(t, 3, s.Inner.N)
}

func TestDecoderTakesNumbersOfEveryParser(t *testing.T) {
	// YAML gives int, TOML int64, JSON float64 and big YAML integers uint64.
	// A duration is a number only when it is zero.
	s, errs := decode(map[string]any{
		"i": int64(5), "i64": float64(1 << 40), "u": uint64(1 << 63), "f": 3, "d": int64(0), "ds": []any{float64(0), "2s"},
	})
	require.Empty(t, errs)
	assert.Equal(t, 5, s.I)
	assert.Equal(t, int64(1<<40), s.I64)
	assert.Equal(t, uint(1<<63), s.U)
	assert.Equal(t, 3.0, s.F)
	assert.Equal(t, time.Duration(0), s.D)
	assert.Equal(t, []time.Duration{0, 2 * time.Second}, s.Ds)
}

func TestDecoderTakesGoValuesOfTheFieldsType(t *testing.T) {
	s, errs := decode(map[string]any{
		"d": 2 * time.Second, "ss": []string{"x"}, "mode": mode("slow"), "addr": "::1",
	})
	require.Empty(t, errs)
	assert.Equal(t, 2*time.Second, s.D)
	assert.Equal(t, []string{"x"}, s.Ss)
	assert.Equal(t, mode("slow"), s.Mode)
	assert.Equal(t, netip.IPv6Loopback(), s.Addr)
}

func TestDecoderRejectsWhatIsNotOfTheFieldsType(t *testing.T) {
	_, errs := decode(map[string]any{
		"s":     5,
		"b":     "yes",
		"i":     2.5,
		"i8":    200,
		"u":     -1,
		"u8":    "256",
		"f":     "fast",
		"d":     true,
		"ds":    []any{"1s", "soon"},
		"ss":    map[string]any{},
		"addr":  "not-an-ip",
		"inner": []any{1},
		"m":     map[string]any{"a": 1},
		"wat":   1,
	})
	got := messages(errs)
	want := map[string]string{
		"x.s":     `want a string, got integer 5`,
		"x.b":     `want a boolean, got string "yes"`,
		"x.i":     `want an integer, got number 2.5`,
		"x.i8":    `want an integer between -128 and 127, got integer 200`,
		"x.u":     `want a non-negative integer, got integer -1`,
		"x.u8":    `want a non-negative integer between 0 and 255, got string "256"`,
		"x.f":     `want a number, got string "fast"`,
		"x.d":     `want a duration such as 250ms, 10s or 1h30m, got boolean true`,
		"x.ds[1]": `want a duration such as 250ms, 10s or 1h30m, got string "soon"`,
		"x.ss":    `want a list of strings, got a table`,
		"x.addr":  `invalid value "not-an-ip"`,
		"x.inner": `want a table, got a list of 1 items`,
		"x.m":     `field type map[string]int is not supported`,
		"x.wat":   `unknown key (valid: addr, b, d, ds, f, f32, i, i64, i8, inner, m, mode, s, ss, u, u8)`,
	}
	for key, w := range want {
		assert.Contains(t, got[key], w, key)
	}
	assert.Len(t, got, len(want))
}

func TestDecoderLeavesAFieldUnchangedWhenItsValueIsBad(t *testing.T) {
	s := sample{I: 9, Ss: []string{"keep"}}
	d := &decoder{}
	d.decodeStruct("", map[string]any{"i": "nine", "ss": []any{"a", 1}}, reflect.ValueOf(&s).Elem())
	assert.Len(t, d.errs, 2)
	assert.Equal(t, 9, s.I)
	assert.Equal(t, []string{"keep"}, s.Ss, "a list with a bad item is not half-applied")
}

func TestDecoderKeepsTheDefaultForNull(t *testing.T) {
	s := sample{S: "default", Ss: []string{"d"}}
	d := &decoder{}
	d.decodeStruct("", map[string]any{"s": nil, "ss": nil}, reflect.ValueOf(&s).Elem())
	assert.Empty(t, d.errs)
	assert.Equal(t, "default", s.S)
	assert.Equal(t, []string{"d"}, s.Ss)
}

func TestAnEmptyStringIsAnEmptyList(t *testing.T) {
	s, errs := decode(map[string]any{"ss": ""})
	require.Empty(t, errs)
	assert.Equal(t, []string{}, s.Ss)
}

func TestTypeNamesReadAsAUserWritesThem(t *testing.T) {
	names := map[string]string{}
	for _, f := range fieldsOf(reflect.TypeFor[sample]()) {
		names[f.key] = typeName(f.typ)
	}
	assert.Equal(t, map[string]string{
		"s": "string", "b": "boolean", "i": "integer", "i8": "integer", "i64": "integer",
		"u": "non-negative integer", "u8": "non-negative integer", "f32": "number", "f": "number",
		"d": "duration", "ds": "list of durations", "ss": "list of strings", "addr": "string",
		"mode": "string", "inner": "table", "m": "map[string]int",
	}, names)
}

func TestValidationPrefixesKeysAndSplitsJoinedErrors(t *testing.T) {
	d := &decoder{origin: map[string]string{"scheduler.workers": "WEFT_SCHEDULER_WORKERS"}}
	d.validation("scheduler", nil)
	d.validation("scheduler", joinErrs(
		&core.ConfigError{Key: "workers", Problem: "must be >= 1, got 0"},
		&core.ConfigError{Problem: "is inconsistent"},
		assert.AnError,
	))
	var got []string
	for _, e := range d.errs {
		got = append(got, e.Error())
	}
	assert.Equal(t, []string{
		`weft: config key "scheduler.workers": must be >= 1, got 0 (from WEFT_SCHEDULER_WORKERS)`,
		`weft: config key "scheduler": is inconsistent`,
		`weft: config key "scheduler": ` + assert.AnError.Error(),
	}, got)
	assert.ErrorIs(t, d.errs[2], assert.AnError)
}

type joined []error

func (j joined) Error() string {
	var s []string
	for _, e := range j {
		s = append(s, e.Error())
	}
	return strings.Join(s, "\n")
}
func (j joined) Unwrap() []error { return j }

func joinErrs(errs ...error) error { return joined(errs) }
