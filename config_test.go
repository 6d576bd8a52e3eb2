package weft_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/runtime/rt"
)

// One WEFT_ variable that belongs to something else must not break a
// program that never asked for it: weft.New builds, and the runtime's
// logger says the variable was ignored and which valid one is closest.
func TestAnUnrelatedWeftVariableDoesNotBreakNew(t *testing.T) {
	t.Setenv("WEFT_HOME", "/opt/weft")
	t.Setenv("WEFT_SCHEDULER_WOKERS", "3")
	var log bytes.Buffer
	r, err := weft.New(rt.WithLogger(slog.New(slog.NewTextHandler(&log, nil))))
	require.NoError(t, err)
	require.NoError(t, r.Close())
	assert.Contains(t, log.String(), "ignoring environment variable WEFT_HOME")
	assert.Contains(t, log.String(), "variable=WEFT_SCHEDULER_WOKERS closest=WEFT_SCHEDULER_WORKERS")
}
