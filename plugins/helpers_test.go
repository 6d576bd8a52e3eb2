package plugins_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The binaries the tests run, built once by TestMain.
var (
	epollBin, epollSum string // plugins/examples/epoll-driver
	testBin, testSum   string // plugins/internal/testplugin
)

func TestMain(m *testing.M) {
	// go-plugin logs every process start and exit at Info; the tests
	// start hundreds.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	dir, err := os.MkdirTemp("", "weft-plugins-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = buildAll(dir, "./examples/epoll-driver", "./internal/testplugin")
	if err == nil {
		epollBin, testBin = filepath.Join(dir, "epoll-driver"), filepath.Join(dir, "testplugin")
		epollSum, err = sha256File(epollBin)
	}
	if err == nil {
		testSum, err = sha256File(testBin)
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
