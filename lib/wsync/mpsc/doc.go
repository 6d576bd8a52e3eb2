// Package mpsc is weft's multi-producer, single-consumer channel, in two
// flavours: bounded ([New]), whose senders wait for capacity, and unbounded
// ([NewUnbounded]), whose senders never wait. Both deliver to a
// [Receiver], owned by one task, in the order the messages were sent.
//
//	tx, rx := mpsc.New[int](16)
//	// in a producer task:   err, ok := tx.SendInto(&st.send, v).Poll(cx)
//	// in the consumer task: r, ok := rx.Recv().Poll(cx)
//
// Futures are for tasks; goroutines outside the runtime use the
// non-waiting TrySend and TryRecv (and the unbounded Send).
//
// # Capacity
//
// A bounded channel's capacity is a FIFO semaphore (the engine under
// weft/lib/wsync.Semaphore) with one permit per free slot. A send first
// acquires a permit, then appends its message; a receive takes a message and
// releases its permit, which goes to the oldest waiting sender. So senders
// are served in order, and a ReserveMany of n slots waits at the head of the
// queue until n are free. The queue itself is a ring buffer under a mutex,
// with the receiver's waker next to it: a send appends and takes the waker
// in one critical section, and a receive that finds nothing registers its
// waker in the same critical section in which it looked, so no wake is
// lost.
//
// # Closing
//
// Go has no destructors, so handles are closed explicitly. Each sender
// handle ([Sender.Clone] makes more) is closed with Close; the channel
// closes when the last one is. The receiver may close it first
// ([Receiver.Close]): sends not yet granted capacity fail with [ErrClosed],
// but messages already buffered, and those sent through permits already
// reserved, are still delivered. A receive resolves to [ErrClosed] only
// when the channel is closed, the buffer is empty and (bounded) no sender
// holds a permit that could still become a message; whoever returns the
// last such permit wakes the receiver.
//
// # Cancel safety
//
// Every future of this package may be dropped at any time without losing
// anything:
//
//   - A dropped [RecvFuture] or [RecvManyFuture] has taken no message: a
//     receive takes messages only in the poll that resolves it.
//   - A dropped [SendFuture] has not sent its value (it sends in the very
//     poll that finds its capacity granted) and capacity granted to it
//     goes to the next sender. Unlike Tokio's send, it is therefore safe to
//     use in a select: the caller still has the value.
//   - A dropped [ReserveFuture] gives back what it was granted, partially
//     or fully. A [Permit] that is not used must be released.
//
// # Budget and wakes
//
// Every future consumes one unit of the task's cooperative budget per poll
// before it looks at the channel, so a task looping over a channel that is
// always ready yields after 128 operations. A send wakes the receiver, and
// a receive wakes the sender it grants capacity to, through the Context of
// the poll, so the woken task runs next on the same worker; methods called
// outside a poll use plain wakes, or take a Context in their From form.
//
// # Allocation
//
// The receiver owns its receive futures: Recv and RecvMany return them
// without allocating. Send and Reserve allocate a future; SendInto and
// ReserveManyInto reuse one the caller owns, so a producer that keeps a
// SendFuture in its state sends without allocating.
package mpsc
