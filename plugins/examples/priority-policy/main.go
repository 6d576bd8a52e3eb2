// Command priority-policy serves a scheduler policy as a plugin: tasks of
// higher priority run first, tasks of equal priority in the order they
// became runnable (policy.Priority). The host keeps and runs the tasks; a
// task's priority is what it was spawned with (plugins.SpawnWith). Build
// it, take its digest, and select it in a configuration:
//
//	go build -o priority-policy ./plugins/examples/priority-policy
//	sha256sum priority-policy
//
//	scheduler: {kind: plugin, path: ./priority-policy, sha256: <digest>}
//
// Run by hand, it explains that it is a plugin and exits.
package main

import (
	"github.com/weftrt/weft/plugins/policy"
	"github.com/weftrt/weft/plugins/sdk"
)

func main() {
	sdk.ServeSchedulerPolicy("priority", func() policy.Policy { return policy.NewPriority() })
}
