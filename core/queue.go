package core

// TaskQueue is an intrusive FIFO of tasks, linked through the tasks
// themselves so that queueing allocates nothing. It is not synchronised:
// schedulers guard it with their own lock. A task may be in only one
// TaskQueue at a time, which the NOTIFIED protocol guarantees for run queues.
type TaskQueue struct {
	head, tail *Task
	n          int
}

// Len returns the number of queued tasks.
func (q *TaskQueue) Len() int { return q.n }

// Push appends t.
func (q *TaskQueue) Push(t *Task) {
	t.queueNext = nil
	if q.tail == nil {
		q.head = t
	} else {
		q.tail.queueNext = t
	}
	q.tail = t
	q.n++
}

// PushAll appends every task of other, in order, and empties other.
func (q *TaskQueue) PushAll(other *TaskQueue) {
	if other.head == nil {
		return
	}
	if q.tail == nil {
		q.head = other.head
	} else {
		q.tail.queueNext = other.head
	}
	q.tail = other.tail
	q.n += other.n
	*other = TaskQueue{}
}

// Pop removes and returns the oldest task, or nil when the queue is empty.
func (q *TaskQueue) Pop() *Task {
	t := q.head
	if t == nil {
		return nil
	}
	q.head = t.queueNext
	if q.head == nil {
		q.tail = nil
	}
	t.queueNext = nil
	q.n--
	return t
}
