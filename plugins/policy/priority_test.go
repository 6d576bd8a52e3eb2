package policy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/policy"
)

func TestPriorityRunsHigherFirstAndFIFOWithinAPriority(t *testing.T) {
	p := policy.NewPriority()
	ev := func(k policy.Kind, id, prio int) policy.Event {
		return policy.Event{Kind: k, Task: core.TaskID(id), Priority: prio}
	}
	got := p.OnEvents(policy.Batch{Max: 10, Events: []policy.Event{
		ev(policy.Spawned, 1, 0), ev(policy.Spawned, 2, 5), ev(policy.Spawned, 3, 0), ev(policy.Spawned, 4, 5),
	}})
	assert.Equal(t, []core.TaskID{2, 4, 1, 3}, got)
	// 2 runs and is woken again: it goes behind 4 within priority 5.
	got = p.OnEvents(policy.Batch{Max: 2, Events: []policy.Event{
		ev(policy.Polled, 2, 0), ev(policy.Woken, 2, 5),
	}})
	assert.Equal(t, []core.TaskID{4, 2}, got)
	got = p.OnEvents(policy.Batch{Max: 10, Events: []policy.Event{
		ev(policy.Polled, 4, 0), ev(policy.Completed, 4, 0), ev(policy.Polled, 2, 0), ev(policy.Spawned, 5, -1),
	}})
	assert.Equal(t, []core.TaskID{1, 3, 5}, got)
}
