// Command fanin is examples/fanin written with goroutines and Go channels,
// the same program, for comparing the two.
package main

import (
	"flag"
	"fmt"
	"sync/atomic"
	"time"
)

// job is one unit of work: it returns its result after its own time.
type job func(stop <-chan struct{}) int

// report is what collect gathered.
type report struct {
	results  []int
	timedOut bool
}

// collect is examples/fanin's Collect.
func collect(jobs []job, workers, buffered int, deadline time.Duration) report {
	results := make(chan int, buffered)
	stop := make(chan struct{})
	defer close(stop)
	var next atomic.Int64
	var running atomic.Int64
	running.Store(int64(workers))
	for range workers {
		go func() {
			defer func() {
				if running.Add(-1) == 0 {
					close(results)
				}
			}()
			for i := next.Add(1) - 1; i < int64(len(jobs)); i = next.Add(1) - 1 {
				select {
				case results <- jobs[i](stop):
				case <-stop:
					return
				}
			}
		}()
	}

	var rep report
	timeout := time.NewTimer(deadline)
	defer timeout.Stop()
	for {
		select {
		case v, ok := <-results:
			if !ok {
				return rep
			}
			rep.results = append(rep.results, v)
		case <-timeout.C:
			rep.timedOut = true
			return rep
		}
	}
}

func main() {
	jobs := flag.Int("jobs", 100, "jobs to run")
	workers := flag.Int("workers", 8, "jobs running at once")
	buffer := flag.Int("buffer", 4, "results waiting for the collector at most")
	deadline := flag.Duration("deadline", time.Second, "when to stop collecting")
	flag.Parse()

	js := make([]job, *jobs)
	for i := range js {
		js[i] = func(stop <-chan struct{}) int {
			select {
			case <-time.After(time.Duration(i%10) * time.Millisecond):
			case <-stop:
			}
			return i
		}
	}
	rep := collect(js, *workers, *buffer, *deadline)
	fmt.Printf("collected %d of %d results (timed out: %v)\n", len(rep.results), *jobs, rep.timedOut)
}
