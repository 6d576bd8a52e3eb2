// Package internal is the scheduler kit: the parts that weft's schedulers
// (workstealing, percore, currentthread) would otherwise each carry a copy
// of, once, in one module that only they may import (Go's internal rule
// admits exactly the packages under schedulers/), as drivers/internal is
// for the drivers. This package holds no code; the kit is its packages,
// one per concept, so that each is named for what it is at the call site
// (runq.Queue, globalq.Queue, park.Parker) and keeps its protocol and its
// tests to itself:
//
//   - runq: the run queue, the lock-free stealable ring of one owner and
//     any number of thieves, with its head/steal/tail protocol. How a
//     thief splits a backlog is a parameter (runq.Split): workstealing
//     takes half rounded up, percore half rounded down. Also the random
//     start of a thief's scan of the other run queues (runq.Rand).
//   - globalq: the global queue, a FIFO under a mutex with an atomic
//     length mirror, the overflow of full run queues, and the share a
//     worker takes of it (globalq.Queue.Take). percore's mailboxes are
//     global queues too.
//   - park: the parker, whose state machine makes an unpark before the
//     park impossible to lose, and which parks off a quiescent driver
//     until the driver's activation hook moves it in; and the timeout of
//     a park that holds the timers (park.Deadline).
//   - metrics: the counters a worker keeps without synchronisation, its
//     mean poll time measured per batch, and their atomic publication for
//     core.MetricsSource.
//   - deferred: the wakers deferred by yields until the next driver and
//     timer poll, and the batch of tasks they wake.
//   - module: configuration problems named by key, and the checks every
//     New starts with (the schedulers register with
//     core.RegisterScheduler).
//   - schedtest: test helpers that the kit's tests and the schedulers'
//     tests share (only tests import it).
//
// The idle accounting (which workers are parked, how many search) stays
// in each scheduler: workstealing's packs its counts in one word and
// parks any number of workers on a stack, percore's is a bit set of at
// most 64 workers that leaves failed workers out and picks in rotation.
// The two share a rule (at most about half the workers search) but not a
// protocol. currentthread, which has one worker and no thieves, uses the
// global queue, the metrics and the deferred wakers, and keeps its own
// parked flag.
//
// The kit requires only github.com/weftrt/weft/core.
package internal
