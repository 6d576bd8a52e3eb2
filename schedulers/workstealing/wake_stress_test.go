package workstealing_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// TestWakesRacingWithWorkersGoingIdleAreNeverLost plays ping-pong between
// a plain goroutine and the runtime: each round the goroutine spawns a
// task from outside and waits for it to answer, so every round starts
// with the workers parking or parked and ends with one of them woken. A
// lost wake-up (a notify that misses a worker on its way to sleep, or a
// last searcher that does not re-check) leaves a round unanswered, which
// the watchdog turns into a failure.
func TestWakesRacingWithWorkersGoingIdleAreNeverLost(t *testing.T) {
	rounds := 5_000
	if testing.Short() {
		rounds = 500
	}
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			r, _ := newRuntime(t, n)
			answer := make(chan int, 1)
			deadline := time.After(hangLimit)
			rng := rand.New(rand.NewPCG(uint64(n), 7))
			for i := 0; i < rounds; i++ {
				i := i
				// Vary the phase: the workers may still be searching,
				// on their way to sleep, or asleep.
				for k := rng.IntN(40); k > 0; k-- {
					runtime.Gosched()
				}
				// Alternate between a task that answers at once and one
				// that first spawns a local child that answers, so the
				// wake paths from outside and from a worker both run.
				rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
					if i%2 == 0 {
						answer <- i
					} else {
						core.Spawn(cx, core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
							answer <- i
							return core.Unit{}, true
						})))
					}
					return core.Unit{}, true
				})))
				select {
				case got := <-answer:
					if got != i {
						t.Fatalf("round %d answered %d", i, got)
					}
				case <-deadline:
					t.Fatalf("round %d of %d was never answered: a wake was lost", i, rounds)
				}
			}
		})
	}
}
