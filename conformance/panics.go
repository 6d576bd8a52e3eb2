package conformance

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
)

// logBuffer is an io.Writer for a slog handler that tests read while
// workers write.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// panicInConformanceTask is the future function that panics; its name is
// what the logged and printed stacks must show.
func panicInConformanceTask(*core.Context) (int, bool) {
	panic("conformance boom")
}

// spawnPanicAndWait spawns a task that panics, drops its handle (nobody
// joins it) and waits, by yielding, until the task has finished: its
// panic has been handled by then, since the runtime reacts to a panic
// before the task completes.
func spawnPanicAndWait(t *testing.T, r *rt.Runtime) {
	t.Helper()
	var h *core.JoinHandle[int]
	_, err := blockOn(t, r, fn(func(cx *core.Context) (int, bool) {
		if h == nil {
			h = core.Spawn(cx, fn(panicInConformanceTask))
			defer h.Drop()
		}
		if !h.IsFinished() {
			cx.Defer(cx.Waker())
			return 0, false
		}
		return 0, true
	}))
	require.NoError(t, err)
}

func testPanicIsLogged(t *testing.T, f SchedulerFactory) {
	var logs logBuffer
	r := newRuntime(t, f, func(b *rt.Builder) {
		b.Logger(slog.New(slog.NewTextHandler(&logs, nil)))
	})
	spawnPanicAndWait(t, r)
	out := logs.String()
	assert.Contains(t, out, "level=ERROR")
	assert.Contains(t, out, "task panicked")
	assert.Contains(t, out, "conformance boom", "the log names the panic value")
	assert.Contains(t, out, "panicInConformanceTask", "the log carries the stack where the task panicked")
}

func testPanicIgnored(t *testing.T, f SchedulerFactory) {
	var logs logBuffer
	r := newRuntime(t, f, func(b *rt.Builder) {
		b.Logger(slog.New(slog.NewTextHandler(&logs, nil))).UnhandledPanic(config.UnhandledPanicIgnore)
	})
	spawnPanicAndWait(t, r)
	assert.NotContains(t, logs.String(), "conformance boom")
}

// crashChildEnv marks the subprocess of testPanicCrashes.
const crashChildEnv = "WEFT_CONFORMANCE_CRASH_CHILD"

func testPanicCrashes(t *testing.T, f SchedulerFactory) {
	if os.Getenv(crashChildEnv) != "" {
		// The child: this must never return.
		r := newRuntime(t, f, func(b *rt.Builder) { b.UnhandledPanic(config.UnhandledPanicCrash) })
		spawnPanicAndWait(t, r)
		t.Fatal("the runtime went on after a panic with runtime.unhandled_panic: crash")
	}
	// Run exactly this behaviour again in a child process.
	levels := strings.Split(t.Name(), "/")
	for i, l := range levels {
		levels[i] = "^" + regexpQuote(l) + "$"
	}
	cmd := exec.Command(os.Args[0], "-test.run="+strings.Join(levels, "/"), "-test.count=1")
	cmd.Env = append(os.Environ(), crashChildEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the child must exit with an error, got %v; stderr:\n%s", err, stderr.String())
	assert.Equal(t, 2, exit.ExitCode(), "an unrecovered panic exits with status 2; stderr:\n%s", stderr.String())
	assert.Contains(t, stderr.String(), "panic: conformance boom")
	assert.Contains(t, stderr.String(), "panicInConformanceTask", "standard error shows the stack where the task panicked")
}

// regexpQuote escapes what -test.run would read as a pattern.
func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
