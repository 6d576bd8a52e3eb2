package core

import (
	"fmt"
	"strings"
)

// ConfigError is a configuration problem at one key. Modules return it from
// their configuration's Validate method with Key relative to their own
// subtree ("workers"); the loader prefixes the subtree ("scheduler.workers")
// so the message names the full key.
type ConfigError struct {
	Key     string   // dotted key, e.g. "scheduler.workers"
	Problem string   // what is wrong, e.g. "must be >= 1, got 0"
	Valid   []string // the valid values or keys, when there is a short list
	Err     error    // the underlying cause, if any
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "weft: config key %q: %s", e.Key, e.Problem)
	if len(e.Valid) > 0 {
		fmt.Fprintf(&b, " (valid: %s)", strings.Join(e.Valid, ", "))
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *ConfigError) Unwrap() error { return e.Err }

// WithPrefix returns a copy of e whose key is prefixed by prefix and a dot.
func (e *ConfigError) WithPrefix(prefix string) *ConfigError {
	c := *e
	if prefix != "" {
		if c.Key == "" {
			c.Key = prefix
		} else {
			c.Key = prefix + "." + c.Key
		}
	}
	return &c
}
