package plugins_test

import (
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/plugins"
)

func digest(t *testing.T, hexSum string) []byte {
	t.Helper()
	b, err := hex.DecodeString(hexSum)
	require.NoError(t, err)
	return b
}

// newDriver starts a driver plugin with the test's defaults.
func newDriver(t *testing.T, path, sum string, args ...string) (*plugins.Driver, error) {
	t.Helper()
	return plugins.NewDriver(plugins.DriverOptions{Launch: plugins.LaunchConfig{
		Path: path, SHA256: digest(t, sum), Args: args,
	}})
}

func requireErrorText(t *testing.T, err error, target error, fragments ...string) {
	t.Helper()
	require.Error(t, err)
	if target != nil {
		require.ErrorIs(t, err, target)
	}
	var pe *plugins.Error
	require.ErrorAs(t, err, &pe, "the error names the plugin")
	for _, f := range fragments {
		assert.Contains(t, err.Error(), f)
	}
}

func TestAChecksumMismatchRefusesToStartTheBinary(t *testing.T) {
	wrong := strings.Repeat("ab", 32)
	_, err := newDriver(t, epollBin, wrong)
	requireErrorText(t, err, plugins.ErrChecksumMismatch,
		`weft: plugin "epoll-driver"`, "checksum mismatch",
		"the binary's sha256 is "+epollSum, "the configuration expects "+wrong)
}

func TestAMissingChecksumRefusesToStartTheBinary(t *testing.T) {
	_, err := plugins.NewDriver(plugins.DriverOptions{Launch: plugins.LaunchConfig{Path: epollBin}})
	requireErrorText(t, err, plugins.ErrChecksumMismatch, "no SHA-256 digest configured")
}

func TestAWrongMagicCookieFailsTheHandshake(t *testing.T) {
	_, err := newDriver(t, testBin, testSum, "cookie")
	requireErrorText(t, err, plugins.ErrHandshake,
		"plugin handshake failed", "wrong magic cookie",
		"This binary is a plugin") // the plugin's own words, from its stderr
}

func TestAnIncompatibleProtocolVersionFailsTheHandshake(t *testing.T) {
	_, err := newDriver(t, testBin, testSum, "protocol")
	requireErrorText(t, err, plugins.ErrHandshake,
		"no protocol version in common", "the host speaks weft plugin protocol 1", "Plugin version: 99")
}

func TestANonExecutablePathIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "not-executable")
	copyFile(t, epollBin, path, 0o644)
	_, err := newDriver(t, path, epollSum)
	requireErrorText(t, err, nil, "is not executable (mode -rw-r--r--)", path)
}

func TestAMissingBinaryIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nothing-here")
	_, err := newDriver(t, path, epollSum)
	requireErrorText(t, err, nil, "no such file", path)
}

func TestAPluginOfAnotherKindIsRefused(t *testing.T) {
	_, err := newDriver(t, testBin, testSum, "kind")
	requireErrorText(t, err, plugins.ErrWrongKind, `it serves a timer module ("test-kind"), not a driver`)
}

func TestABinaryThatIsNotAPluginFailsTheHandshake(t *testing.T) {
	_, err := newDriver(t, testBin, testSum, "garbage")
	requireErrorText(t, err, plugins.ErrHandshake, "did not speak go-plugin's handshake", "hello, I am not a plugin")
}

func TestAPluginThatDescribesItselfWronglyFailsTheHandshake(t *testing.T) {
	_, err := newDriver(t, testBin, testSum, "lying-name")
	requireErrorText(t, err, plugins.ErrHandshake, "the plugin's Info is invalid", `name: "epoll\x00" holds the unprintable character U+0000`)
	_, err = newDriver(t, testBin, testSum, "lying-protocol")
	requireErrorText(t, err, plugins.ErrHandshake, "the plugin describes protocol 7, the handshake negotiated 1")
}

func TestInspectReportsKindProtocolAndChecksum(t *testing.T) {
	info, err := plugins.Inspect(epollBin, plugins.InspectOptions{})
	require.NoError(t, err)
	assert.Equal(t, "driver", info.Kind)
	assert.Equal(t, "epoll", info.Name)
	assert.Equal(t, 1, info.Protocol)
	assert.Equal(t, epollSum, info.SHA256)
	assert.Equal(t, epollBin, info.Path)

	_, err = plugins.Inspect(epollBin, plugins.InspectOptions{SHA256: strings.Repeat("0", 64)})
	require.ErrorIs(t, err, plugins.ErrChecksumMismatch)
	_, err = plugins.Inspect(testBin, plugins.InspectOptions{Args: []string{"protocol"}})
	require.ErrorIs(t, err, plugins.ErrHandshake)
	assert.False(t, errors.Is(err, plugins.ErrChecksumMismatch))
}
