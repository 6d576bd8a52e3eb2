package wheel_test

import (
	"testing"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/timers/wheel"
)

func TestConformanceWithOneShard(t *testing.T) {
	conformance.Timer(t, func(c core.Clock) core.Timer { return wheel.New(c, 1) })
}

func TestConformanceWithEightShards(t *testing.T) {
	conformance.Timer(t, func(c core.Clock) core.Timer { return wheel.New(c, 8) })
}
