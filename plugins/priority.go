package plugins

import (
	"sync"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// TaskInfo is what a scheduler policy plugin learns about a task besides
// its id: a priority (higher runs first under the priority policy; 0 by
// default) and a name for policies and their logs.
type TaskInfo struct {
	Priority int
	Name     string
}

// spawnInfo carries a TaskInfo from SpawnWith to the plugin scheduler's
// Spawn, which runs within SpawnTask on the same call stack: the entry
// lives only for that call.
var spawnInfo sync.Map // *core.Task → TaskInfo

// SpawnWith spawns f on s like core.Spawn, telling the scheduler the
// task's priority and name. A plugin scheduler (kind scheduler, module
// "plugin") passes them to its policy with the task's Spawned event and
// repeats the priority with each Woken event; any other scheduler ignores
// them. A task spawned without them has priority 0 and no name.
func SpawnWith[T any](s core.Spawner, info TaskInfo, f core.Future[T]) *core.JoinHandle[T] {
	t, h := core.NewTask(f)
	spawnInfo.Store(t, info)
	err := s.SpawnTask(t)
	spawnInfo.Delete(t)
	if err != nil {
		spi.Reject(t, err)
	}
	return h
}

// takeSpawnInfo returns the TaskInfo SpawnWith attached to t, if any.
func takeSpawnInfo(t *core.Task) (TaskInfo, bool) {
	v, ok := spawnInfo.Load(t)
	if !ok {
		return TaskInfo{}, false
	}
	return v.(TaskInfo), true
}
