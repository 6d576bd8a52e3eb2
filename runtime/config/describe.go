package config

import (
	"bytes"
	"encoding"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/weftrt/weft/core"
)

// Setting is one configuration key and its value.
type Setting struct {
	Key   string // dotted key, e.g. "scheduler.workers"
	Type  string // as a user writes it: "integer", "duration", "list of strings", ...
	Value any    // the Go value of the field
}

// ValueString formats the value as it would be written in a file:
// durations as "10s", lists as "[a, b]", the empty string as "".
func (s Setting) ValueString() string { return formatValue(reflect.ValueOf(s.Value)) }

// String returns "key = value".
func (s Setting) String() string { return s.Key + " = " + s.ValueString() }

// SettingsOf returns the keys of a configuration struct (or a pointer to
// one) with their current values, in declaration order, each prefixed by
// prefix and a dot unless prefix is empty. Applied to a module's fresh
// NewConfig() it lists the module's keys and defaults. It returns nil for
// anything that is not a struct.
func SettingsOf(prefix string, cfg any) []Setting {
	rv := reflect.ValueOf(cfg)
	for rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv = rv.Elem()
	}
	if !rv.IsValid() || !isTable(rv.Type()) {
		return nil
	}
	var out []Setting
	walk(prefix, rv, func(key string, v reflect.Value) {
		out = append(out, Setting{Key: key, Type: typeName(v.Type()), Value: v.Interface()})
	})
	return out
}

// walk calls leaf for every configurable leaf field of the struct v, in
// declaration order, with its dotted key.
func walk(prefix string, v reflect.Value, leaf func(key string, v reflect.Value)) {
	for _, f := range fieldsOf(v.Type()) {
		key := joinKey(prefix, f.key)
		fv := v.FieldByIndex(f.index)
		if isTable(f.typ) {
			walk(key, fv, leaf)
			continue
		}
		leaf(key, fv)
	}
}

// Settings returns every effective key of the composition with its value:
// the runtime's keys, then for each module kind in core.Kinds order its kind
// and its module's keys.
func (c *Composition) Settings() []Setting {
	out := SettingsOf(runtimeSection, &c.Runtime)
	for _, kind := range core.Kinds {
		sel := c.Selection(kind)
		out = append(out, Setting{Key: joinKey(string(kind), kindKey), Type: "string", Value: sel.Name})
		out = append(out, SettingsOf(string(kind), sel.Config)...)
	}
	return out
}

// String lists every effective key of the composition with its value, one
// "key = value" line each, in the order of Settings.
func (c *Composition) String() string {
	settings := c.Settings()
	width := 0
	for _, s := range settings {
		width = max(width, len(s.Key))
	}
	var b strings.Builder
	for _, s := range settings {
		fmt.Fprintf(&b, "%-*s = %s\n", width, s.Key, s.ValueString())
	}
	return b.String()
}

// YAML renders the composition as a configuration file that loads back to
// the same composition, every key written out, sections in the order of
// Settings, each kind annotated with its module's description.
func (c *Composition) YAML() ([]byte, error) {
	root := &yaml.Node{Kind: yaml.MappingNode}
	root.Content = append(root.Content, scalar(runtimeSection), yamlNode(reflect.ValueOf(c.Runtime)))
	for _, kind := range core.Kinds {
		sel := c.Selection(kind)
		section := &yaml.Node{Kind: yaml.MappingNode}
		kindValue := scalar(sel.Name)
		switch {
		case sel.Name == None:
			kindValue.LineComment = "disabled"
		case sel.Module.Doc != "":
			kindValue.LineComment = sel.Module.Doc
		}
		section.Content = append(section.Content, scalar(kindKey), kindValue)
		if sel.Config != nil {
			section.Content = append(section.Content, yamlNode(reflect.ValueOf(sel.Config).Elem()).Content...)
		}
		root.Content = append(root.Content, scalar(string(kind)), section)
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scalar returns a string node.
func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// yamlNode renders a configuration value as a YAML node.
func yamlNode(v reflect.Value) *yaml.Node {
	t := v.Type()
	switch {
	case t == durationType, decodesText(t):
		return scalar(formatValue(v))
	case isTable(t):
		n := &yaml.Node{Kind: yaml.MappingNode}
		for _, f := range fieldsOf(t) {
			n.Content = append(n.Content, scalar(f.key), yamlNode(v.FieldByIndex(f.index)))
		}
		return n
	}
	switch t.Kind() {
	case reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for i := range v.Len() {
			n.Content = append(n.Content, yamlNode(v.Index(i)))
		}
		return n
	case reflect.String:
		return scalar(v.String())
	case reflect.Bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(v.Bool())}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(v.Int(), 10)}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatUint(v.Uint(), 10)}
	case reflect.Float32, reflect.Float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(v.Float(), 'g', -1, t.Bits())}
	}
	return scalar(fmt.Sprint(v.Interface()))
}

// formatValue formats a configuration value for people: durations as
// "10s", text types by their MarshalText, lists as "[a, b]", the empty
// string as "".
func formatValue(v reflect.Value) string {
	if !v.IsValid() {
		return "null"
	}
	t := v.Type()
	if t == durationType {
		return time.Duration(v.Int()).String()
	}
	if t.Implements(textMarshalerType) {
		if b, err := v.Interface().(encoding.TextMarshaler).MarshalText(); err == nil {
			return string(b)
		}
	}
	switch t.Kind() {
	case reflect.String:
		if s := v.String(); s == "" || strings.TrimSpace(s) != s {
			return strconv.Quote(s)
		}
		return v.String()
	case reflect.Slice:
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = formatValue(v.Index(i))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v.Interface())
}

// toTree converts a configuration struct to the tree a parser would produce
// from a file holding it (durations and text types as strings).
func toTree(v reflect.Value) any {
	t := v.Type()
	switch {
	case t == durationType, decodesText(t):
		return formatValue(v)
	case isTable(t):
		m := map[string]any{}
		for _, f := range fieldsOf(t) {
			m[f.key] = toTree(v.FieldByIndex(f.index))
		}
		return m
	case t.Kind() == reflect.Slice:
		items := make([]any, v.Len())
		for i := range items {
			items[i] = toTree(v.Index(i))
		}
		return items
	}
	return v.Interface()
}
