package core_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

func TestVirtualClockStartsPausedAtZeroWithAutoAdvanceOn(t *testing.T) {
	c := core.NewVirtualClock()
	assert.Equal(t, core.Instant(0), c.Now())
	assert.Equal(t, core.Instant(0), c.Now(), "a virtual clock does not move by itself")
	assert.True(t, c.AutoAdvance())
	var _ core.VirtualClock = c
}

func TestVirtualClockAdvanceMovesForwardOnly(t *testing.T) {
	c := core.NewVirtualClock()
	c.Advance(3 * time.Second)
	assert.Equal(t, core.Instant(3*time.Second), c.Now())
	c.Advance(-time.Second)
	c.Advance(0)
	assert.Equal(t, core.Instant(3*time.Second), c.Now(), "negative and zero advances do nothing")
	c.AdvanceTo(core.Instant(time.Second))
	assert.Equal(t, core.Instant(3*time.Second), c.Now(), "AdvanceTo never goes backwards")
	c.AdvanceTo(core.Instant(time.Hour))
	assert.Equal(t, core.Instant(time.Hour), c.Now())
}

func TestVirtualClockSaturatesInsteadOfWrapping(t *testing.T) {
	c := core.NewVirtualClock()
	c.AdvanceTo(math.MaxInt64 - 5)
	c.Advance(time.Hour)
	assert.Equal(t, core.Instant(math.MaxInt64), c.Now())
}

func TestVirtualClockConcurrentAdvancesAddUp(t *testing.T) {
	c := core.NewVirtualClock()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				c.Advance(time.Millisecond)
				c.AdvanceTo(c.Now() - 1)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, core.Instant(8000*time.Millisecond), c.Now())
}

func TestVirtualClockAutoAdvanceCanBeSwitched(t *testing.T) {
	c := core.NewVirtualClock()
	c.SetAutoAdvance(false)
	assert.False(t, c.AutoAdvance())
	c.SetAutoAdvance(true)
	assert.True(t, c.AutoAdvance())
}

func TestVirtualClockIsRegisteredWithAnAutoAdvanceKey(t *testing.T) {
	m, err := core.Lookup(core.KindClock, "virtual")
	require.NoError(t, err)
	require.NotNil(t, m.NewConfig)
	cfg, ok := m.NewConfig().(*core.VirtualClockConfig)
	require.True(t, ok)
	assert.True(t, cfg.AutoAdvance, "auto-advance defaults to on")

	v, err := m.New(cfg, &core.ClockParams{})
	require.NoError(t, err)
	vc, ok := v.(core.VirtualClock)
	require.True(t, ok)
	assert.True(t, vc.AutoAdvance())

	cfg.AutoAdvance = false
	v, err = m.New(cfg, &core.ClockParams{})
	require.NoError(t, err)
	assert.False(t, v.(core.VirtualClock).AutoAdvance())
}
