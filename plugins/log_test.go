package plugins

import (
	"strings"
	"testing"
)

// A plugin that writes without a newline does not grow the host's memory:
// its output is logged in pieces of maxLogLine bytes.
func TestOutputWithoutANewlineIsLoggedInBoundedPieces(t *testing.T) {
	var lines []string
	w := &lineWriter{emit: func(l string) { lines = append(lines, l) }}
	chunk := []byte(strings.Repeat("y", 1000))
	for range 200 {
		_, _ = w.Write(chunk)
	}
	if len(w.buf) > maxLogLine {
		t.Fatalf("%d bytes kept, above %d", len(w.buf), maxLogLine)
	}
	if len(lines) != 200*1000/maxLogLine {
		t.Fatalf("%d pieces logged, want %d", len(lines), 200*1000/maxLogLine)
	}
	for _, l := range lines {
		if len(l) != maxLogLine {
			t.Fatalf("a piece of %d bytes", len(l))
		}
	}
}

// FuzzPluginOutputLines writes a plugin's standard output or error, in
// the pieces the fuzzer chooses, to a lineWriter: every line it emits is
// whole text of the input (none empty, none with a newline, none longer
// than its limit), what it keeps stays under the limit, and nothing but
// newlines and line-ending carriage returns is dropped.
func FuzzPluginOutputLines(f *testing.F) {
	f.Add([]byte("one\ntwo\r\n\nthree"), uint8(3))
	f.Add([]byte(strings.Repeat("x", 100)+"\n"), uint8(7))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		const limit = 16
		var lines []string
		w := &lineWriter{max: limit, emit: func(l string) { lines = append(lines, l) }}
		for p := data; len(p) > 0; {
			n := min(len(p), int(cut)+1)
			if m, err := w.Write(p[:n]); m != n || err != nil {
				t.Fatalf("Write wrote %d of %d: %v", m, n, err)
			}
			if len(w.buf) > limit {
				t.Fatalf("%d bytes kept, above the limit %d", len(w.buf), limit)
			}
			p = p[n:]
		}
		for _, l := range lines {
			if l == "" || len(l) > limit || strings.Contains(l, "\n") {
				t.Fatalf("emitted %q", l)
			}
		}
		strip := func(s string) string { return strings.NewReplacer("\n", "", "\r", "").Replace(s) }
		if got, want := strip(strings.Join(lines, "")+string(w.buf)), strip(string(data)); got != want {
			t.Fatalf("the lines hold %q, the input %q", got, want)
		}
	})
}
