package co

import (
	"fmt"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
)

// Branch is one arm of a [Select]: a future, where to store its value when
// it wins, and whether the select owns the future (a [Case]) or only
// borrows it (a [Keep]). Build branches with Case and Keep; the zero
// Branch is not a valid arm.
type Branch struct {
	// fut is the branch's future, a core.Future[T] held as any so that
	// branches of different types fit one slice; poll knows T.
	fut any
	// dst is the *T the winner's value is stored through (a nil *T
	// discards it).
	dst any
	// poll polls fut once with cx and, when it is ready, stores its value
	// through dst. It is a zero-size pollerOf[T, F], which knows T and F:
	// converting it to the interface allocates nothing, where a func
	// value of a generic instantiation made in generic code would
	// allocate a closure for its dictionary.
	poll branchPoller
	// keep: the caller owns fut; Select never drops it.
	keep bool
}

// Case is a branch that the select owns: f is polled by the select, and
// dropped (exactly once) if another branch wins, when the task is aborted
// while the select waits, or when a branch's poll panics. If f wins, its
// value is stored in *dst (dst may be nil to discard it) and f, complete,
// is not dropped. Use Case for one-shot futures made for this select:
// a receive, a sleep made on the spot, a join handle you give up on.
func Case[T any, F core.Future[T]](f F, dst *T) Branch {
	return Branch{fut: f, dst: dst, poll: pollerOf[T, F]{}}
}

// Keep is a branch over a future the caller keeps: the select polls f but
// never drops it, so f stays armed across iterations of a select loop,
// with whatever it registered (a timer entry, a waiter) intact, and the
// next Select continues it where the last one left off. This is Tokio's
// `&mut fut` in select!. If f wins, its value is stored in *dst (dst may
// be nil) and f has completed: reset it (a timing.SleepFuture's Reset or
// ResetAfter) or replace it before selecting on it again, since polling a
// completed future is the future's own business (most panic). The caller
// drops f when done with it, usually with a deferred core.Drop, which also
// runs if the task is aborted while the select waits.
func Keep[T any, F core.Future[T]](f F, dst *T) Branch {
	return Branch{fut: f, dst: dst, poll: pollerOf[T, F]{}, keep: true}
}

// branchPoller polls a branch's future; see Branch.poll.
type branchPoller interface {
	poll(fut, dst any, cx *core.Context) bool
}

// pollerOf is the branchPoller of futures of type F and values of type T.
type pollerOf[T any, F core.Future[T]] struct{}

func (pollerOf[T, F]) poll(fut, dst any, cx *core.Context) bool {
	v, ok := fut.(F).Poll(cx)
	if ok {
		if d := dst.(*T); d != nil {
			*d = v
		}
	}
	return ok
}

// Select waits until one of branches is ready and returns its index, the
// position of the winning branch in the arguments; its value has been
// stored through the branch's destination. Before Select returns, every
// other [Case] branch has been dropped exactly once; [Keep] branches are
// never dropped by Select. It reads as Go's select statement in a switch:
//
//	var msg core.Result[int]
//	for {
//		switch co.Select(c, co.Case(rx.Recv(), &msg), co.Keep(tick, nil)) {
//		case 0: // msg holds the receive's result
//		case 1: // the tick fired; tick.ResetAfter(time.Second)
//		}
//	}
//
// Each round polls every branch once, with the task's Context, starting
// at a pseudo-random branch so that none is favoured when several are
// ready (the source is lib/future's [future.Fair], as for future.Select);
// [SelectBiased] polls in argument order instead. A branch ready at its
// first poll wins at once, without suspending. When no branch is ready the
// body suspends until the task is woken, then polls another round. As
// future.Select does, a round whose task has spent its cooperative budget
// polls nothing and yields to other tasks first.
//
// If the task is aborted while Select waits, the Case branches are
// dropped, each once, and the body unwinds (see the package
// documentation); the Keep futures are the caller's and are left to its
// deferred calls. If a branch's poll panics, the Case branches (the
// panicking one included, as future.Select's Drop would) are dropped, each
// once, and the panic continues with its original stack.
//
// Declare the destinations outside the loop: a destination escapes to the
// heap, so one declared inside the loop costs an allocation per
// iteration, while Select itself allocates nothing. Select panics when
// there is no branch, when a branch is the zero Branch, or when c is not
// a running coroutine task's Ctx.
func Select(c *Ctx, branches ...Branch) int { return c.sel("Select", branches, false) }

// SelectBiased is [Select] with a fixed order: each round polls the
// branches in argument order, so when several are ready the first of them
// wins, deterministically. Put the branch that must not starve (shutdown,
// a deadline) first.
func SelectBiased(c *Ctx, branches ...Branch) int {
	return c.sel("SelectBiased", branches, true)
}

// fair returns the task's source of starting branches, seeding it from
// lib/future's sequence at the first fair select of the task.
func (c *Ctx) fair() *future.Fair {
	if !c.fairSeeded {
		c.fairRand = future.NewFair()
		c.fairSeeded = true
	}
	return &c.fairRand
}

// sel is Select and SelectBiased.
func (c *Ctx) sel(op string, bs []Branch, biased bool) int {
	cx := c.running(op)
	if len(bs) == 0 {
		panic("weft/co: " + op + " of no branches")
	}
	for i := range bs {
		if bs[i].poll == nil {
			panic(fmt.Sprintf("weft/co: %s branch %d is the zero Branch; build branches with co.Case or co.Keep", op, i))
		}
	}
	won := false
	defer func() {
		if !won {
			// Unwinding (abort) or a branch's poll panicked: the
			// select's own futures go with it.
			dropCases(bs, -1)
		}
	}()
	n := len(bs)
	for {
		if c.aborting {
			// Unwinding: a deferred call selects. Do not wait.
			panic(errUnwind)
		}
		if cx.BudgetRemaining() > 0 || cx.Proceed() {
			i := 0
			if !biased && n > 1 {
				i = c.fair().Below(n)
			}
			for range n {
				b := &bs[i]
				if b.poll.poll(b.fut, b.dst, cx) {
					won = true
					dropCases(bs, i)
					return i
				}
				if i++; i == n {
					i = 0
				}
			}
		}
		// Nothing ready (or the budget is spent, and Proceed has woken
		// the task): wait for a wake.
		if !c.suspend() {
			panic(errUnwind)
		}
		cx = c.cx
	}
}

// dropCases drops the futures of the Case branches of bs except the one at
// index skip. If a Drop panics, the remaining ones are still dropped
// before the panic goes on.
func dropCases(bs []Branch, skip int) {
	for i := range bs {
		if i == skip || bs[i].keep || bs[i].fut == nil {
			continue
		}
		dropThen(bs[i].fut, bs[i+1:], skip-i-1)
		return
	}
}

// dropThen drops f, then the Case branches of rest (except index skip),
// even if dropping f panics.
func dropThen(f any, rest []Branch, skip int) {
	defer dropCases(rest, skip)
	core.Drop(f)
}
