package currentthread_test

import (
	"fmt"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/currentthread"
)

// lifo is a scheduling policy in plain Go: the task that became runnable
// last runs first.
type lifo struct{ stack []*core.Task }

func (l *lifo) Spawned(t *core.Task)   { l.stack = append(l.stack, t) }
func (l *lifo) Woken(t *core.Task)     { l.stack = append(l.stack, t) }
func (l *lifo) Completed(t *core.Task) {}
func (l *lifo) Next() *core.Task {
	n := len(l.stack)
	if n == 0 {
		return nil
	}
	t := l.stack[n-1]
	l.stack[n-1] = nil
	l.stack = l.stack[:n-1]
	return t
}

// A runtime whose current-thread scheduler runs tasks newest first: the
// root spawns three tasks in one poll, and they run in reverse.
func ExampleNewWithPolicy() {
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		return currentthread.NewWithPolicy(currentthread.DefaultConfig(), p, &lifo{})
	}).Build()
	if err != nil {
		panic(err)
	}
	defer r.Close()

	var hs []*core.JoinHandle[core.Unit]
	root := core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if hs == nil {
			for _, name := range []string{"first", "second", "third"} {
				hs = append(hs, core.Spawn(cx, core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
					fmt.Println("running", name)
					return core.Unit{}, true
				}))))
			}
		}
		for _, h := range hs {
			if _, ok := h.Poll(cx); !ok {
				return core.Unit{}, false
			}
		}
		return core.Unit{}, true
	})
	if _, err := rt.BlockOn(r, core.Future[core.Unit](root)); err != nil {
		panic(err)
	}
	// Output:
	// running third
	// running second
	// running first
}
