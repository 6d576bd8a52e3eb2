//go:build !linux

package percore

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// Off Linux there is no pinning, and pin: true is a problem at its key.
func TestPinningOffLinuxIsAProblemAtItsKey(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Pin = true
	var ce *core.ConfigError
	require.ErrorAs(t, cfg.Validate(), &ce)
	assert.Equal(t, "pin", ce.Key)
	assert.Contains(t, ce.Problem, "needs Linux")
}
