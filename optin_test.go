package weft_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
)

// The weft package leaves the plugin modules out: none of the packages it
// links is go-plugin, gRPC or protobuf.
func TestTheFacadeLinksNoPluginRPCPackage(t *testing.T) {
	gobin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command lists the facade's dependencies")
	out, err := exec.Command(gobin, "list", "-deps", "github.com/weftrt/weft").Output()
	require.NoError(t, err, "go list -deps: %s", exitStderr(err))
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/weftrt/weft/runtime/rt", "go list printed the dependencies")
	var linked []string
	for _, dep := range deps {
		for _, banned := range []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/hashicorp/go-plugin", "github.com/weftrt/weft/plugins"} {
			if strings.HasPrefix(dep, banned) {
				linked = append(linked, dep)
			}
		}
	}
	assert.Empty(t, linked, "packages the facade must not link")
}

// A program on the facade alone that asks for the plugin module is told
// which import enables it, at the key that asked.
func TestAPluginSchedulerWithoutThePluginsImportNamesTheImport(t *testing.T) {
	_, err := weft.NewBuilder().Set("scheduler.kind", "plugin").Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"scheduler.kind"`)
	assert.Contains(t, err.Error(), `import _ "github.com/weftrt/weft/plugins"`)
}

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
