// Package readme keeps the README's first program honest: the test
// extracts it and builds it against the workspace.
package readme

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTheREADMEsFirstProgramBuilds(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	text := string(readme)
	start := strings.Index(text, "```go\npackage main\n")
	require.GreaterOrEqual(t, start, 0, "the README's first program is gone")
	body := text[start+len("```go\n"):]
	body = body[:strings.Index(body, "```")]

	// Built inside this module (its go.mod knows the weft modules), from
	// a directory of its own.
	local := filepath.Join(".", "testdata-build")
	require.NoError(t, os.MkdirAll(local, 0o755))
	t.Cleanup(func() { os.RemoveAll(local) })
	require.NoError(t, os.WriteFile(filepath.Join(local, "main.go"), []byte(body), 0o644))
	cmd := exec.Command("go", "build", "-o", filepath.Join(t.TempDir(), "prog"), "./testdata-build")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the README's first program does not build:\n%s", out)
}
