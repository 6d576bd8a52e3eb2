package heap_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/timers/heap"
)

func TestConformanceWithOneShard(t *testing.T) {
	conformance.Timer(t, func(c core.Clock) core.Timer { return heap.New(c, 1, 4) })
}

func TestConformanceWithEightShardsOfBinaryHeaps(t *testing.T) {
	conformance.Timer(t, func(c core.Clock) core.Timer { return heap.New(c, 8, 2) })
}

func TestConformanceWithSixteenAryHeaps(t *testing.T) {
	conformance.Timer(t, func(c core.Clock) core.Timer { return heap.New(c, 2, 16) })
}
