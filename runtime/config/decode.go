package config

import (
	"encoding"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weftrt/weft/core"
)

// This file is the strict decoder: it walks a merged configuration tree
// (maps, lists and scalars as the parsers produce them) and a struct by its
// koanf tags side by side, and records a *core.ConfigError naming the full
// key for every unknown key, wrong type or out-of-range value, then keeps
// going so that one load reports every problem.

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshalerType   = reflect.TypeFor[encoding.TextMarshaler]()
)

// decoder decodes trees into structs and collects the problems it finds.
type decoder struct {
	errs []error
	// origin maps a dotted key to the environment variable or other
	// non-file source that set it, so a message can say where a bad value
	// came from.
	origin map[string]string
	// kindNotes maps a section whose kind the environment chose to a note
	// saying so, added to every other problem in the section: its keys
	// are checked against the module the environment named, which may not
	// be the one the file names.
	kindNotes map[string]string
}

// fail records a problem at key.
func (d *decoder) fail(key, problem string, valid []string, cause error) {
	d.add(&core.ConfigError{Key: key, Problem: problem, Valid: valid, Err: cause})
}

// add records e, noting where its value came from when that is known, and
// which module the environment chose for its section.
func (d *decoder) add(e *core.ConfigError) {
	c := *e
	if o, ok := d.origin[e.Key]; ok {
		c.Problem += " (from " + o + ")"
	}
	section := sectionOf(e.Key)
	if note := d.kindNotes[section]; note != "" && e.Key != joinKey(section, kindKey) {
		c.Problem += note
	}
	d.errs = append(d.errs, &c)
}

// validation records the result of a Validate method whose keys are
// relative to prefix. A *core.ConfigError gets its key prefixed; any other
// error is reported at prefix itself. Joined errors are taken apart.
func (d *decoder) validation(prefix string, err error) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			d.validation(prefix, e)
		}
		return
	}
	if ce, ok := err.(*core.ConfigError); ok {
		d.add(ce.WithPrefix(prefix))
		return
	}
	d.add(&core.ConfigError{Key: prefix, Problem: err.Error(), Err: err})
}

// field is one configurable field of a struct.
type field struct {
	key   string
	index []int
	typ   reflect.Type
}

// fieldsOf returns the configurable fields of struct type t in declaration
// order: the exported fields with a koanf tag other than "-".
func fieldsOf(t reflect.Type) []field {
	var fs []field
	for sf := range t.Fields() {
		if !sf.IsExported() {
			continue
		}
		key, _, _ := strings.Cut(sf.Tag.Get("koanf"), ",")
		if key == "" || key == "-" {
			continue
		}
		fs = append(fs, field{key: key, index: sf.Index, typ: sf.Type})
	}
	return fs
}

// isTable reports whether values of t are decoded from a table of keys: a
// struct that is not a duration and does not decode itself from text.
func isTable(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !decodesText(t)
}

// joinKey appends key to the dotted prefix.
func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// decodeStruct decodes table into dst, a settable struct value, whose
// dotted key is prefix. Keys named in reserved are valid here but handled
// by the caller (a section's kind); any other key without a field is an
// error listing the valid keys.
func (d *decoder) decodeStruct(prefix string, table map[string]any, dst reflect.Value, reserved ...string) {
	fs := fieldsOf(dst.Type())
	byKey := make(map[string]field, len(fs))
	valid := slices.Clone(reserved)
	for _, f := range fs {
		byKey[f.key] = f
		valid = append(valid, f.key)
	}
	slices.Sort(valid)
	for _, k := range slices.Sorted(maps.Keys(table)) {
		if slices.Contains(reserved, k) {
			continue
		}
		key := joinKey(prefix, k)
		f, ok := byKey[k]
		if !ok {
			problem := "unknown key"
			if len(valid) == 0 {
				problem = "unknown key: this section takes no keys"
			}
			d.fail(key, problem, valid, nil)
			continue
		}
		d.decodeValue(key, table[k], dst.FieldByIndex(f.index))
	}
}

// decodeValue decodes v into dst, a settable value, at key. On a problem it
// records an error and leaves dst unchanged.
func (d *decoder) decodeValue(key string, v any, dst reflect.Value) {
	if v == nil {
		return // null keeps the default
	}
	t := dst.Type()
	rv := reflect.ValueOf(v)
	// A Go value of the field's own type (from the overrides) is taken as
	// it is; maps and lists are still walked so their contents are checked.
	if rv.Type() == t && t.Kind() != reflect.Map && t.Kind() != reflect.Slice {
		dst.Set(rv)
		return
	}
	if t == durationType {
		d.decodeDuration(key, v, dst)
		return
	}
	if decodesText(t) {
		s, ok := v.(string)
		if !ok {
			d.wrongType(key, t, v)
			return
		}
		p := reflect.New(t)
		if err := p.Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			d.fail(key, fmt.Sprintf("invalid value %q: %v", s, err), nil, err)
			return
		}
		dst.Set(p.Elem())
		return
	}
	switch t.Kind() {
	case reflect.String:
		if rv.Kind() != reflect.String {
			d.wrongType(key, t, v)
			return
		}
		dst.SetString(rv.String())
	case reflect.Bool:
		switch x := v.(type) {
		case bool:
			dst.SetBool(x)
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				d.wrongType(key, t, v)
				return
			}
			dst.SetBool(b)
		default:
			d.wrongType(key, t, v)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s, ok := integerText(v)
		if !ok {
			d.wrongType(key, t, v)
			return
		}
		n, err := strconv.ParseInt(s, 10, t.Bits())
		if err != nil {
			d.badInteger(key, t, v, err)
			return
		}
		dst.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		s, ok := integerText(v)
		if !ok {
			d.wrongType(key, t, v)
			return
		}
		n, err := strconv.ParseUint(s, 10, t.Bits())
		if err != nil {
			d.badInteger(key, t, v, err)
			return
		}
		dst.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, ok := number(v, t.Bits())
		if !ok {
			d.wrongType(key, t, v)
			return
		}
		dst.SetFloat(f)
	case reflect.Slice:
		d.decodeSlice(key, v, dst)
	case reflect.Struct:
		table, ok := v.(map[string]any)
		if !ok {
			d.wrongType(key, t, v)
			return
		}
		d.decodeStruct(key, table, dst)
	default:
		d.fail(key, fmt.Sprintf("field type %s is not supported by the configuration decoder (a bug in the module)", t), nil, nil)
	}
}

// decodesText reports whether values of t decode themselves from a string:
// *t implements encoding.TextUnmarshaler.
func decodesText(t reflect.Type) bool {
	return reflect.PointerTo(t).Implements(textUnmarshalerType)
}

// decodeDuration accepts a Go duration string ("250ms", "1h30m"). A number
// without a unit (5, or "5" from the environment) is an error that shows
// the units, as it is not clear what it counts; only zero, the same in
// every unit, may be written bare.
func (d *decoder) decodeDuration(key string, v any, dst reflect.Value) {
	s, isString := v.(string)
	if isString {
		if dur, err := time.ParseDuration(s); err == nil {
			dst.SetInt(int64(dur))
			return
		}
	}
	f, isNumber := number(v, 64)
	switch {
	case !isNumber:
		d.wrongType(key, durationType, v)
	case f == 0:
		dst.SetInt(0)
	default:
		d.fail(key, fmt.Sprintf("want a duration with a unit, such as 250ms, 10s or 1h30m, got %s, "+
			"which has no unit (the units are ns, us, ms, s, m and h)", describe(v)), nil, nil)
	}
}

// decodeSlice decodes a list, or a comma-separated string (an environment
// variable), element by element; element keys are key[i].
func (d *decoder) decodeSlice(key string, v any, dst reflect.Value) {
	var items []any
	switch x := v.(type) {
	case string:
		if strings.TrimSpace(x) != "" {
			for _, part := range strings.Split(x, ",") {
				items = append(items, strings.TrimSpace(part))
			}
		}
	default:
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
			d.wrongType(key, dst.Type(), v)
			return
		}
		for i := range rv.Len() {
			items = append(items, rv.Index(i).Interface())
		}
	}
	out := reflect.MakeSlice(dst.Type(), len(items), len(items))
	before := len(d.errs)
	for i, item := range items {
		d.decodeValue(fmt.Sprintf("%s[%d]", key, i), item, out.Index(i))
	}
	if len(d.errs) == before {
		dst.Set(out)
	}
}

// integerText returns v as base-10 integer text for strconv to parse (and
// range-check): any Go integer, a float without a fractional part (JSON has
// only floats), or a string. It reports false for other types.
func integerText(v any) (string, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(rv.Uint(), 10), true
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if f != math.Trunc(f) || math.IsInf(f, 0) {
			return "", false
		}
		return strconv.FormatFloat(f, 'f', -1, 64), true
	case reflect.String:
		return rv.String(), true
	}
	return "", false
}

// number returns v as a float of the given size: any Go number or a string
// holding one.
func number(v any, bits int) (float64, bool) {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int()), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return float64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return rv.Float(), true
	case reflect.String:
		f, err := strconv.ParseFloat(rv.String(), bits)
		return f, err == nil
	}
	return 0, false
}

// badInteger reports an integer that strconv rejected: out of range for
// the field, or not an integer at all.
func (d *decoder) badInteger(key string, t reflect.Type, v any, err error) {
	if !errors.Is(err, strconv.ErrRange) {
		d.wrongType(key, t, v)
		return
	}
	var lo, hi string
	bits := t.Bits()
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		lo, hi = "0", strconv.FormatUint(math.MaxUint64>>(64-bits), 10)
	default:
		lo, hi = strconv.FormatInt(math.MinInt64>>(64-bits), 10), strconv.FormatInt(math.MaxInt64>>(64-bits), 10)
	}
	d.fail(key, fmt.Sprintf("want %s between %s and %s, got %s", withArticle(typeName(t)), lo, hi, describe(v)), nil, err)
}

// wrongType reports a value that is not of the field's type.
func (d *decoder) wrongType(key string, t reflect.Type, v any) {
	want := withArticle(typeName(t))
	if t == durationType {
		want += " such as 250ms, 10s or 1h30m"
	}
	d.fail(key, fmt.Sprintf("want %s, got %s", want, describe(v)), nil, nil)
}

// typeName names the configuration type of a Go type, as the user writes it.
func typeName(t reflect.Type) string {
	if t == durationType {
		return "duration"
	}
	if decodesText(t) {
		return "string"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return "list of " + typeName(t.Elem()) + "s"
	case reflect.Struct:
		return "table"
	}
	return t.String()
}

// withArticle prefixes a type name with "a" or "an".
func withArticle(name string) string {
	if strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

// describe says what a decoded value is, for "got ..." in messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("string %q", x)
	case time.Duration:
		return "duration " + x.String()
	case time.Time:
		return "date-time " + x.Format(time.RFC3339)
	case map[string]any:
		return "a table"
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Bool:
		return fmt.Sprintf("boolean %t", rv.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("integer %v", v)
	case reflect.Float32, reflect.Float64:
		return fmt.Sprintf("number %v", v)
	case reflect.Slice, reflect.Array:
		return fmt.Sprintf("a list of %d items", rv.Len())
	case reflect.Map:
		return "a table"
	}
	return fmt.Sprintf("%T %v", v, v)
}
