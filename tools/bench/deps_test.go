package bench_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tools sit above the examples, never on them: no package of the
// tools module, tests included, imports one of examples/.
func TestNoToolImportsAnExample(t *testing.T) {
	gobin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command lists the tools' dependencies")
	cmd := exec.Command(gobin, "list", "-deps", "-test", "github.com/weftrt/weft/tools/...")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	var examples []string
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/weftrt/weft/examples") {
			examples = append(examples, dep)
		}
	}
	assert.Contains(t, string(out), "github.com/weftrt/weft/tools/internal/echo", "go list printed the dependencies")
	assert.Empty(t, examples, "examples the tools import")
}
