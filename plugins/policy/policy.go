// Package policy defines scheduler policies for weft's plugin scheduler: the
// events a policy receives about the host's tasks, the decisions it returns,
// and a reference policy, Priority.
//
// A policy runs inside a plugin binary (sdk.ServeSchedulerPolicy) while the
// host keeps the tasks: the host reports what happens to them in batches and
// runs them in the order the policy returns. A policy never sees a task's
// future, only its id and the metadata it was spawned with
// (plugins.SpawnWith), so it can be written, tested and replaced without
// touching the program whose tasks it orders.
//
// The events are those of the current-thread scheduler's in-process hook,
// currentthread.Policy, by task id and in batches: the plugin scheduler is
// that hook served by a Policy in another process. A policy for one
// program, with no process boundary, implements currentthread.Policy.
package policy

import (
	"fmt"

	"github.com/weftrt/weft/core"
)

// Kind is what happened to a task.
type Kind uint8

// The events a policy receives.
const (
	// Spawned: a new task exists and is runnable. Priority and Name are
	// what it was spawned with (zero and "" by default).
	Spawned Kind = iota + 1
	// Woken: an idle task became runnable again. Priority is repeated so
	// that a policy restarted after a crash learns it.
	Woken
	// Polled: the host took the task out of its run queue to poll it; it
	// is not runnable until it is woken again.
	Polled
	// Completed: the task finished (or was cancelled); its id is never
	// seen again.
	Completed
)

func (k Kind) String() string {
	switch k {
	case Spawned:
		return "spawned"
	case Woken:
		return "woken"
	case Polled:
		return "polled"
	case Completed:
		return "completed"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Event is one thing that happened to a task.
type Event struct {
	Kind Kind
	Task core.TaskID
	// Priority is set for Spawned and Woken events.
	Priority int
	// Name is set for Spawned events.
	Name string
}

// Batch is what the host sends at once: the events since its previous
// batch, in the order they happened, and the most decisions it wants.
type Batch struct {
	Events []Event
	// Max bounds the length of the returned order.
	Max int
}

// Policy orders the host's runnable tasks. OnEvents receives each batch in
// order and returns the runnable tasks the host should run next, first
// first, at most b.Max of them. The host runs them in that order, skipping
// any that stopped being runnable meanwhile, and then the runnable tasks
// the order left out, in the order they became runnable. A returned order
// replaces the previous one.
//
// OnEvents is called from one goroutine at a time per host scheduler; a
// policy serving several hosts (one session each) gets one Policy from its
// factory per session.
type Policy interface {
	OnEvents(b Batch) []core.TaskID
}
