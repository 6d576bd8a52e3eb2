package config_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/weftrt/weft/runtime/config"
)

// A file chooses the modules, the environment adjusts it, and the result
// lists every effective key. test-sched is a fake scheduler registered by
// this package's tests; a real program links schedulers in by importing
// them (or the weft facade).
func ExampleLoadWith() {
	dir, _ := os.MkdirTemp("", "weft-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "weft.yaml")
	_ = os.WriteFile(path, []byte(`
runtime:
  name: example
scheduler:
  kind: test-sched
  workers: 8
  queue: {policy: lifo}
`), 0o644)

	c, err := config.LoadWith(config.LoadOptions{
		Path:    path,
		Environ: []string{"WEFT_SCHEDULER_WORKERS=4", "WEFT_RUNTIME_BLOCKING_MAX_THREADS=64"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(c)
	// Output:
	// runtime.name                 = example
	// runtime.unhandled_panic      = log
	// runtime.shutdown_timeout     = 10s
	// runtime.event_buffer         = 1024
	// runtime.blocking.max_threads = 64
	// runtime.blocking.keep_alive  = 10s
	// driver.kind                  = none
	// clock.kind                   = real
	// timer.kind                   = none
	// scheduler.kind               = test-sched
	// scheduler.workers            = 4
	// scheduler.pinned             = false
	// scheduler.tick               = 1ms
	// scheduler.cpus               = []
	// scheduler.tags               = [a]
	// scheduler.ratio              = 0.5
	// scheduler.queue.depth        = 256
	// scheduler.queue.policy       = lifo
	// scheduler.queue.lifo_limit   = 3
}

// Every problem is reported at once, one per line, each naming its key.
func ExampleLoadWith_errors() {
	_, err := config.LoadWith(config.LoadOptions{
		Environ: []string{"WEFT_SCHEDULER_QUEUE_POLICY=random"},
		Overrides: map[string]any{
			"scheduler.workers":       0,
			"runtime.unhandled_panic": "explode",
			"driver.kind":             "epoll",
		},
	})
	fmt.Println(err)
	// Output:
	// weft: config key "runtime.unhandled_panic": unknown value "explode" (from overrides) (valid: log, ignore, shutdown_runtime, crash)
	// weft: config key "driver.kind": unknown driver "epoll" (from overrides) (valid: test-driver, none)
	// weft: config key "scheduler.workers": must be >= 1, got 0 (from overrides)
	// weft: config key "scheduler.queue.policy": unknown value "random" (from WEFT_SCHEDULER_QUEUE_POLICY) (valid: fifo, lifo)
}
