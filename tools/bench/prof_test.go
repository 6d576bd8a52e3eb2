package bench

import (
	"testing"

	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
)

// BenchmarkWorkload runs workloads' weft side under go test at size b.N,
// for profiling (-cpuprofile) on the default composition. W12bFloor is
// W4 with one coroutine round trip per task poll, the floor under W12b:
//
//	cd tools && go test -run '^$' -bench 'Workload/(W4|W12b|W12bFloor)$' -benchtime 1000000x -count 5 ./bench/
func BenchmarkWorkload(b *testing.B) {
	run := func(b *testing.B, f func(*rt.Runtime, int) (float64, error)) {
		comp, err := config.LoadWith(config.LoadOptions{})
		if err != nil {
			b.Fatal(err)
		}
		r, err := rt.New(comp)
		if err != nil {
			b.Fatal(err)
		}
		defer r.Close()
		b.ResetTimer()
		if _, err := f(r, b.N); err != nil {
			b.Fatal(err)
		}
	}
	for _, w := range Workloads {
		if w.Weft != nil && !w.NeedsDriver && !w.NeedsTimer {
			b.Run(w.ID, func(b *testing.B) { run(b, w.Weft) })
		}
	}
	b.Run("W12bFloor", func(b *testing.B) { run(b, weftPingPongSwitchFloor) })
}
