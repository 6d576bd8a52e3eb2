package core_test

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
)

func TestVirtualClockStartsPausedAtZeroWithAutoAdvanceOn(t *testing.T) {
	c := core.NewVirtualClock()
	if now := c.Now(); now != 0 {
		t.Errorf("a new virtual clock reads %d, want 0", now)
	}
	if now := c.Now(); now != 0 {
		t.Errorf("a new virtual clock reads %d when read again, want 0: it does not move by itself", now)
	}
	if !c.AutoAdvance() {
		t.Errorf("a new virtual clock has auto-advance off, want on")
	}
	var _ core.VirtualClock = c
}

// wantNow reports, without stopping the test, a clock that does not read
// want; why says what should have brought it there.
func wantNow(t *testing.T, c core.Clock, want core.Instant, why string) {
	t.Helper()
	if now := c.Now(); now != want {
		t.Errorf("%s: the clock reads %d, want %d", why, now, want)
	}
}

func TestVirtualClockAdvanceMovesForwardOnly(t *testing.T) {
	c := core.NewVirtualClock()
	c.Advance(3 * time.Second)
	wantNow(t, c, core.Instant(3*time.Second), "Advance(3s) from 0")
	c.Advance(-time.Second)
	c.Advance(0)
	wantNow(t, c, core.Instant(3*time.Second), "negative and zero advances do nothing")
	c.AdvanceTo(core.Instant(time.Second))
	wantNow(t, c, core.Instant(3*time.Second), "AdvanceTo never goes backwards")
	c.AdvanceTo(core.Instant(time.Hour))
	wantNow(t, c, core.Instant(time.Hour), "AdvanceTo(1h) from 3s")
}

func TestVirtualClockSaturatesInsteadOfWrapping(t *testing.T) {
	c := core.NewVirtualClock()
	c.AdvanceTo(math.MaxInt64 - 5)
	c.Advance(time.Hour)
	wantNow(t, c, core.Instant(math.MaxInt64), "Advance(1h) from 5ns below the largest instant saturates")
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
	wantNow(t, c, core.Instant(8000*time.Millisecond), "8000 concurrent Advance(1ms) add up")
}

func TestVirtualClockAutoAdvanceCanBeSwitched(t *testing.T) {
	c := core.NewVirtualClock()
	c.SetAutoAdvance(false)
	if c.AutoAdvance() {
		t.Errorf("after SetAutoAdvance(false) auto-advance is on")
	}
	c.SetAutoAdvance(true)
	if !c.AutoAdvance() {
		t.Errorf("after SetAutoAdvance(true) auto-advance is off")
	}
}

func TestVirtualClockIsRegisteredWithAnAutoAdvanceKey(t *testing.T) {
	m, err := core.Lookup(core.KindClock, "virtual")
	if err != nil {
		t.Fatalf("Lookup of the virtual clock: %v", err)
	}
	if m.NewConfig == nil {
		t.Fatalf("the virtual clock module has no NewConfig, want one for its auto-advance key")
	}
	newCfg := m.NewConfig()
	cfg, ok := newCfg.(*core.VirtualClockConfig)
	if !ok {
		t.Fatalf("NewConfig returned a %T, want a *core.VirtualClockConfig", newCfg)
	}
	if !cfg.AutoAdvance {
		t.Errorf("the default configuration has auto-advance off, want on")
	}

	v, err := m.New(cfg, &core.ClockParams{})
	if err != nil {
		t.Fatalf("building the virtual clock with the defaults: %v", err)
	}
	vc, ok := v.(core.VirtualClock)
	if !ok {
		t.Fatalf("the virtual clock module built a %T, want a core.VirtualClock", v)
	}
	if !vc.AutoAdvance() {
		t.Errorf("the clock built with auto-advance on has it off")
	}

	cfg.AutoAdvance = false
	v, err = m.New(cfg, &core.ClockParams{})
	if err != nil {
		t.Fatalf("building the virtual clock with auto-advance off: %v", err)
	}
	if v.(core.VirtualClock).AutoAdvance() {
		t.Errorf("the clock built with auto-advance off has it on")
	}
}
