package wheel

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

const msI = core.Instant(time.Millisecond)

func TestDeadlinesRoundUpToTheNextMillisecond(t *testing.T) {
	assert.Equal(t, int64(0), ceilTick(0))
	assert.Equal(t, int64(0), ceilTick(-5))
	assert.Equal(t, int64(1), ceilTick(1))
	assert.Equal(t, int64(1), ceilTick(msI))
	assert.Equal(t, int64(2), ceilTick(msI+1))
	assert.Equal(t, int64(1), floorTick(2*msI-1), "time rounds down")
	assert.Equal(t, core.Instant(math.MaxInt64), tickInstant(ceilTick(math.MaxInt64)), "the end of time saturates")
}

func TestLevelForPicksTheHighestDifferingSixBitGroup(t *testing.T) {
	cases := []struct {
		elapsed, when int64
		level         int
	}{
		{0, 1, 0},
		{0, 63, 0},
		{0, 64, 1},   // crosses a 64 ms block
		{0, 100, 1},  // the package example: 100 ms at tick 0
		{60, 70, 1},  // 10 ms away, but in the next block
		{64, 127, 0}, // same block
		{0, 4095, 1},
		{0, 4096, 2},
		{0, 1 << 30, 5},
		{0, maxSpan - 1, 5},
		{0, maxSpan, 5}, // beyond the levels: the top level
		{0, 1 << 50, 5}, // far beyond
		{maxSpan - 1, maxSpan + 5, 5},
	}
	for _, c := range cases {
		assert.Equal(t, c.level, levelFor(c.elapsed, c.when), "levelFor(%d, %d)", c.elapsed, c.when)
	}
	assert.Equal(t, 1, slotFor(100, 1), "100 ms goes to level 1, slot 1")
}

func TestAnEntryCascadesDownTheLevelsAsTimeAdvances(t *testing.T) {
	s := newShard(0)
	e := &core.TimerEntry{Deadline: core.Instant(5*time.Hour) + 123*msI}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arm(e)
	when := ceilTick(e.Deadline)
	seen := []int{int(spi.LinksOf(e).Slot) / slotsPerLevel}
	for spi.LinksOf(e).Slot != dueSlot {
		_, _, next, ok := s.nextExpiration()
		require.True(t, ok)
		require.LessOrEqual(t, next, when, "a cascade point is never after the deadline")
		s.advance(next)
		if spi.LinksOf(e).Slot != dueSlot {
			seen = append(seen, int(spi.LinksOf(e).Slot)/slotsPerLevel)
		}
	}
	assert.Equal(t, when, s.elapsed, "the entry becomes due exactly at its tick")
	assert.Equal(t, []int{4, 3, 2, 1, 0}, seen, "5 h goes to level 4 and cascades one level at a time")
}

func TestNextExpirationOfABusyHigherLevelIsTheStartOfItsSlot(t *testing.T) {
	s := newShard(0)
	e := &core.TimerEntry{Deadline: 100 * msI}
	s.mu.Lock()
	s.arm(e)
	s.mu.Unlock()
	assert.Equal(t, int64(64), s.next.Load(), "level 1 slot 1 is processed at 64 ms")
}

func TestEntriesBeyondTheTopLevelWaitAFullRotationNotLess(t *testing.T) {
	s := newShard(0)
	// Two entries in the same top-level slot, one rotation apart.
	near := &core.TimerEntry{Deadline: core.Instant(3<<30) * msI}
	far := &core.TimerEntry{Deadline: core.Instant(maxSpan+3<<30) * msI}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.arm(near)
	s.arm(far)
	s.advance(3 << 30)
	for spi.LinksOf(near).Slot != dueSlot {
		_, _, next, _ := s.nextExpiration()
		s.advance(next)
	}
	assert.Equal(t, int64(3<<30), s.elapsed)
	assert.NotEqual(t, int32(dueSlot), spi.LinksOf(far).Slot, "the far entry is not due a rotation early")
	_, _, next, ok := s.nextExpiration()
	require.True(t, ok)
	assert.Equal(t, int64(maxSpan+3<<30), next, "it comes round one rotation later")
}

func TestShardsAreAPowerOfTwoAndClamped(t *testing.T) {
	for in, want := range map[int]int{-1: 1, 0: 1, 1: 1, 3: 4, 8: 8, 9: 16, 1 << 20: MaxShards} {
		assert.Equal(t, want, New(nil, in).Shards(), "New(nil, %d)", in)
	}
	assert.Equal(t, 1, ShardsFor(1))
	assert.Equal(t, 32, ShardsFor(2))
}

func TestEntriesOnDistinctPagesSpreadOverTheShards(t *testing.T) {
	w := New(nil, 16)
	// One entry per 8 KiB page of a large array: 1024 distinct pages.
	const perPage = 8192/int(unsafe.Sizeof(core.TimerEntry{})) + 1
	arr := make([]core.TimerEntry, perPage*1024)
	count := map[*shard]int{}
	for k := range 1024 {
		count[w.shardOf(&arr[k*perPage])]++
	}
	require.Len(t, count, 16, "every shard gets entries")
	for _, n := range count {
		assert.InDelta(t, 64, n, 32, "the page hash spreads pages evenly")
	}
}

func TestEntriesOnOnePageShareAShard(t *testing.T) {
	w := New(nil, 16)
	arr := make([]core.TimerEntry, 10000)
	same := 0
	for i := 1; i < len(arr); i++ {
		if w.shardOf(&arr[i]) == w.shardOf(&arr[i-1]) {
			same++
		}
	}
	// Neighbours differ only across a page boundary (or by a 1-in-16 hash
	// coincidence when they do).
	assert.Greater(t, same, len(arr)*95/100)
}
