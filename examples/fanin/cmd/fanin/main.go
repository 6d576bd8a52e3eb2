// Command fanin runs -jobs simulated jobs (job i takes i%10 ms) on -workers
// weft tasks, collecting results through a channel of -buffer until every
// job is done or -deadline passes.
package main

import (
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/fanin"
	"github.com/weftrt/weft/lib/timing"
)

func main() {
	jobs := flag.Int("jobs", 100, "jobs to run")
	workers := flag.Int("workers", 8, "jobs running at once")
	buffer := flag.Int("buffer", 4, "results waiting for the collector at most")
	deadline := flag.Duration("deadline", time.Second, "when to stop collecting")
	flag.Parse()

	js := make([]fanin.Job, *jobs)
	for i := range js {
		js[i] = func(c *weft.Ctx) int {
			weft.Await(c, timing.Sleep(time.Duration(i%10)*time.Millisecond))
			return i
		}
	}
	rep, err := weft.Main(func(c *weft.Ctx) (fanin.Report, error) {
		return fanin.Collect(c, js, *workers, *buffer, *deadline), nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("collected %d of %d results (timed out: %v)\n", len(rep.Results), *jobs, rep.TimedOut)
}
