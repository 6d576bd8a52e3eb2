package main

import (
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfPlugin returns this test binary's path and digest: started with
// "plugins serve-driver NAME" it serves a driver plugin (see TestMain).
func selfPlugin(t *testing.T) (path, digest string) {
	t.Helper()
	path, err := os.Executable()
	require.NoError(t, err)
	digest, err = fileSHA256(path)
	require.NoError(t, err)
	return path, digest
}

func TestPluginsInspectReportsWhatTheBinaryServes(t *testing.T) {
	path, digest := selfPlugin(t)
	status, stdout, stderr := weft("plugins", "inspect", "--sha256", digest, path, "plugins", "serve-driver", "epoll")
	require.Equal(t, exitOK, status, stderr)
	assert.Regexp(t, `(?m)^path +`+regexp.QuoteMeta(path)+`$`, stdout)
	assert.Regexp(t, `(?m)^sha256 +`+digest+`$`, stdout)
	assert.Regexp(t, `(?m)^kind +driver$`, stdout)
	assert.Regexp(t, `(?m)^module +epoll$`, stdout)
	assert.Regexp(t, `(?m)^protocol +1$`, stdout)
}

func TestPluginsInspectRejectsABinaryWithAnotherDigest(t *testing.T) {
	path, _ := selfPlugin(t)
	wrong := fmt.Sprintf("%064x", 1)
	status, stdout, stderr := weft("plugins", "inspect", "--sha256", wrong, path, "plugins", "serve-driver", "epoll")
	assert.Equal(t, exitProblem, status)
	assert.Empty(t, stdout)
	assert.Contains(t, stderr, "checksum mismatch")
}

func TestPluginsListInspectsTheConfiguredPlugins(t *testing.T) {
	path, digest := selfPlugin(t)
	cfg := writeFile(t, "weft.yaml", fmt.Sprintf("driver:\n  kind: plugin\n  path: %q\n  sha256: %s\n  args: [plugins, serve-driver, epoll]\n  name: self\n", path, digest))
	status, stdout, stderr := weft("plugins", "list", "--config", cfg)
	require.Equal(t, exitOK, status, stderr)
	assert.Regexp(t, `(?m)^SECTION +NAME +PATH +STATE +MODULE +PROTOCOL$`, stdout)
	assert.Regexp(t, `(?m)^driver +self +\S+ +ok +epoll +1$`, stdout)

	status, stdout, _ = weft("plugins", "list")
	require.Equal(t, exitOK, status)
	assert.Equal(t, "no plugin is configured\n", stdout)
}

func TestPluginsServeDriverNeedsACompiledInDriver(t *testing.T) {
	status, _, stderr := weft("plugins", "serve-driver", "nosuch")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, `unknown driver kind "nosuch"`)
	assert.Contains(t, stderr, "epoll")

	status, _, stderr = weft("plugins", "serve-driver", "plugin")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, "a plugin cannot serve the plugin driver")

	status, _, stderr = weft("plugins", "frobnicate")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, `unknown subcommand "frobnicate" (valid: inspect, list, serve-driver, serve-timer)`)
}

func TestPluginsInspectReportsATimerServedByTheWeftExecutable(t *testing.T) {
	path, digest := selfPlugin(t)
	status, stdout, stderr := weft("plugins", "inspect", "--sha256", digest, path, "plugins", "serve-timer", "heap")
	require.Equal(t, exitOK, status, stderr)
	assert.Regexp(t, `(?m)^kind +timer$`, stdout)
	assert.Regexp(t, `(?m)^module +heap$`, stdout)

	status, _, stderr = weft("plugins", "serve-timer", "nosuch")
	assert.Equal(t, exitUsage, status)
	assert.Contains(t, stderr, `unknown timer kind "nosuch"`)
}
