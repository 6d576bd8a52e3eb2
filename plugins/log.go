package plugins

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"

	"github.com/hashicorp/go-hclog"
)

// LevelTrace is the slog level hclog's Trace records map to: below Debug.
const LevelTrace = slog.LevelDebug - 4

// NewHCLogAdapter returns an hclog.Logger that writes every record to l, so
// go-plugin's own diagnostics and the plugin's log lines (which go-plugin
// parses from the plugin's standard error) land in the host's log/slog
// logger with their level, message and attributes. Names set with Named
// become a "logger" attribute path ("logger=epoll-driver.stdio").
func NewHCLogAdapter(l *slog.Logger) hclog.Logger {
	return &hclogAdapter{l: l}
}

type hclogAdapter struct {
	l     *slog.Logger
	name  string
	args  []any
	level hclog.Level // NoLevel: defer to the slog handler
}

func toSlog(level hclog.Level) slog.Level {
	switch level {
	case hclog.Trace:
		return LevelTrace
	case hclog.Debug:
		return slog.LevelDebug
	case hclog.Warn:
		return slog.LevelWarn
	case hclog.Error:
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (a *hclogAdapter) Log(level hclog.Level, msg string, args ...any) {
	if level == hclog.Off || (a.level != hclog.NoLevel && level < a.level) {
		return
	}
	ctx := context.Background()
	sl := toSlog(level)
	if !a.l.Enabled(ctx, sl) {
		return
	}
	attrs := make([]any, 0, len(a.args)+len(args)+2)
	if a.name != "" {
		attrs = append(attrs, "logger", a.name)
	}
	attrs = append(attrs, a.args...)
	attrs = append(attrs, fixArgs(args)...)
	a.l.Log(ctx, sl, msg, attrs...)
}

// fixArgs turns hclog's argument conventions into slog's: an odd trailing
// value gets a key, and hclog.Format values are formatted.
func fixArgs(args []any) []any {
	if len(args)%2 == 1 {
		args = append(args[:len(args)-1:len(args)-1], "EXTRA_VALUE_AT_END", args[len(args)-1])
	}
	for i := 1; i < len(args); i += 2 {
		if f, ok := args[i].(hclog.Format); ok && len(f) > 0 {
			args[i] = fmt.Sprintf(fmt.Sprint(f[0]), f[1:]...)
		}
	}
	return args
}

func (a *hclogAdapter) Trace(msg string, args ...any) { a.Log(hclog.Trace, msg, args...) }
func (a *hclogAdapter) Debug(msg string, args ...any) { a.Log(hclog.Debug, msg, args...) }
func (a *hclogAdapter) Info(msg string, args ...any)  { a.Log(hclog.Info, msg, args...) }
func (a *hclogAdapter) Warn(msg string, args ...any)  { a.Log(hclog.Warn, msg, args...) }
func (a *hclogAdapter) Error(msg string, args ...any) { a.Log(hclog.Error, msg, args...) }

func (a *hclogAdapter) enabled(level hclog.Level) bool {
	if a.level != hclog.NoLevel && level < a.level {
		return false
	}
	return a.l.Enabled(context.Background(), toSlog(level))
}

func (a *hclogAdapter) IsTrace() bool { return a.enabled(hclog.Trace) }
func (a *hclogAdapter) IsDebug() bool { return a.enabled(hclog.Debug) }
func (a *hclogAdapter) IsInfo() bool  { return a.enabled(hclog.Info) }
func (a *hclogAdapter) IsWarn() bool  { return a.enabled(hclog.Warn) }
func (a *hclogAdapter) IsError() bool { return a.enabled(hclog.Error) }

func (a *hclogAdapter) ImpliedArgs() []any { return a.args }

func (a *hclogAdapter) With(args ...any) hclog.Logger {
	c := *a
	c.args = append(append([]any(nil), a.args...), fixArgs(args)...)
	return &c
}

func (a *hclogAdapter) Name() string { return a.name }

func (a *hclogAdapter) Named(name string) hclog.Logger {
	c := *a
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (a *hclogAdapter) ResetNamed(name string) hclog.Logger {
	c := *a
	c.name = name
	return &c
}

func (a *hclogAdapter) SetLevel(level hclog.Level) { a.level = level }

// GetLevel reports the lowest level the slog handler keeps, so go-plugin
// skips parsing lines that would be dropped anyway.
func (a *hclogAdapter) GetLevel() hclog.Level {
	if a.level != hclog.NoLevel {
		return a.level
	}
	for _, l := range []hclog.Level{hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn} {
		if a.l.Enabled(context.Background(), toSlog(l)) {
			return l
		}
	}
	return hclog.Error
}

func (a *hclogAdapter) StandardLogger(opts *hclog.StandardLoggerOptions) *log.Logger {
	return log.New(a.StandardWriter(opts), "", 0)
}

func (a *hclogAdapter) StandardWriter(opts *hclog.StandardLoggerOptions) io.Writer {
	level := hclog.Info
	if opts != nil && opts.ForceLevel != hclog.NoLevel {
		level = opts.ForceLevel
	}
	return &lineWriter{emit: func(line string) { a.Log(level, line) }}
}

// maxLogLine is the longest line a lineWriter keeps: a longer one is
// emitted in pieces of this size, so a plugin that writes without a
// newline cannot grow the host's memory.
const maxLogLine = 64 << 10

// lineWriter calls emit once per complete line written to it, without the
// line's end (a newline, and any carriage returns before it); a partial
// line waits for its end, or is emitted once it reaches max bytes
// (maxLogLine when 0). Empty lines are skipped.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	max  int
	emit func(line string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	limit := w.max
	if limit <= 0 {
		limit = maxLogLine
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			// No end yet: keep the piece, emitting what fills the limit.
			for len(w.buf)+len(p) >= limit {
				k := limit - len(w.buf)
				w.buf = append(w.buf, p[:k]...)
				p = p[k:]
				w.flush(false)
			}
			w.buf = append(w.buf, p...)
			break
		}
		line := p[:i]
		p = p[i+1:]
		for len(w.buf)+len(line) > limit {
			k := limit - len(w.buf)
			w.buf = append(w.buf, line[:k]...)
			line = line[k:]
			w.flush(false)
		}
		w.buf = append(w.buf, line...)
		w.flush(true)
	}
	if len(w.buf) == 0 {
		w.buf = nil
	}
	return n, nil
}

// flush emits the kept bytes, without their carriage returns at the end
// of a line.
func (w *lineWriter) flush(end bool) {
	line := w.buf
	if end {
		line = bytes.TrimRight(line, "\r")
	}
	if len(line) > 0 {
		w.emit(string(line))
	}
	w.buf = w.buf[:0]
}

// tail keeps the last bytes written to it: the end of a plugin's raw
// standard error, quoted in handshake errors.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// String returns the kept bytes, trimmed.
func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}

// levelName names the lowest level l keeps, as the plugin SDK reads it.
func levelName(l *slog.Logger) string {
	ctx := context.Background()
	switch {
	case l.Enabled(ctx, LevelTrace):
		return "trace"
	case l.Enabled(ctx, slog.LevelDebug):
		return "debug"
	case l.Enabled(ctx, slog.LevelInfo):
		return "info"
	case l.Enabled(ctx, slog.LevelWarn):
		return "warn"
	}
	return "error"
}
