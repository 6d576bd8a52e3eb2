//go:build linux

package kqueue_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/kqueue"
	"github.com/weftrt/weft/runtime/rt"
)

// On Linux there is no kqueue, and a configuration naming it is invalid:
// checking it reports the problem at driver.kind, so it never gets as far
// as a build that fails.
func TestKqueueOnLinuxIsAProblemAtDriverKind(t *testing.T) {
	// The module links no scheduler; checking a configuration never
	// builds one, so a factory that would refuse stands in.
	never := func(core.SchedulerParams) (core.Scheduler, error) {
		return nil, errors.New("kqueue test: checking a configuration built the scheduler")
	}
	_, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(never).Driver("kqueue").Composition()
	var ce *core.ConfigError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "driver.kind", ce.Key)
	assert.Contains(t, ce.Error(), `driver "kqueue" is not available on this system: kqueue: the kqueue driver needs darwin, freebsd, netbsd or openbsd; this is linux`)
	assert.NotContains(t, ce.Valid, "kqueue")
	assert.Contains(t, ce.Valid, "none")
	assert.True(t, errors.Is(err, kqueue.ErrUnsupported))
}
