// Command wheel-timer serves weft's hierarchical timing wheel (timers/wheel)
// as a timer plugin: the host sends it inserts and cancels in batches and
// asks it, when a deadline it cached is due, which entries expired. Build
// it, take its digest, and select it in a configuration:
//
//	go build -o wheel-timer ./plugins/examples/wheel-timer
//	sha256sum wheel-timer
//
//	timer: {kind: plugin, path: ./wheel-timer, sha256: <digest>}
//
// Run by hand, it explains that it is a plugin and exits.
package main

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/sdk"
	"github.com/weftrt/weft/timers/wheel"
)

func main() {
	sdk.ServeTimer("wheel", func(clock core.Clock) (core.Timer, error) {
		// One shard: a session's records are applied by one goroutine.
		return wheel.New(clock, 1), nil
	})
}
