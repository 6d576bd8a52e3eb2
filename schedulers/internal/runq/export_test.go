package runq

import "github.com/weftrt/weft/core"

// Slots returns the ring's slots, so that tests can check that none keeps
// a task that left.
func (q *Queue) Slots() []*core.Task { return q.buf[:] }
