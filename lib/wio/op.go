package wio

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync"
)

// Rearmer is implemented by Read and Write futures that can be reused:
// Rearm readies a resolved future for a new transfer of p and reports
// whether it did. It reports false, changing nothing, when the future
// cannot be reused (it is still pending, it failed, or it is of a kind
// that cannot). The futures of weft's drivers and of lib/wnet's streams
// have it; it is what lets an [Op] loop allocate nothing per transfer.
type Rearmer interface {
	Rearm(p []byte) bool
}

// Op is a poll-style read or write that belongs to its caller: the state
// a [PollReader] keeps inside the reader, kept by the caller instead. It
// starts the reader's Read (or the writer's Write) future for a buffer,
// polls it until it resolves, and then re-arms that future for the next
// buffer when it is a [Rearmer], so a loop of transfers allocates nothing
// after the first.
//
// Because each caller owns its Op, any number of them may be in use on
// one stream at once, from as many tasks: no two share an operation, so
// each read gets bytes of its own and no waiter is forgotten. [Copy] and
// the readers, writers and connections of package weft/lib/co each keep
// one Op per direction.
//
// Make one with [ReadOp] or [WriteOp]; the zero Op is not usable. An Op is
// used by one task at a time and must not be copied once used (a copy
// would share the operation it re-arms).
type Op struct {
	start   func([]byte) core.Future[core.Result[int]]
	f       core.Future[core.Result[int]]
	pending bool
}

// ReadOp returns an Op that reads from r.
func ReadOp(r Reader) Op { return Op{start: r.Read} }

// WriteOp returns an Op that writes to w; each transfer may be short, as a
// Write is.
func WriteOp(w Writer) Op { return Op{start: w.Write} }

// Poll transfers into (or from) p like a Read (or Write) future: it
// reports (n, err, true) when done and (0, nil, false) after arranging for
// cx's waker to be woken. Until it reports done, call it again with the
// same p.
func (o *Op) Poll(cx *core.Context, p []byte) (int, error, bool) {
	if !o.pending {
		if r, ok := o.f.(Rearmer); !ok || !r.Rearm(p) {
			o.f = o.start(p)
		}
	}
	res, ok := o.f.Poll(cx)
	o.pending = !ok
	return res.Value, res.Err, ok
}

// Cancel abandons a transfer that reported pending: its future is dropped,
// so its waker is not woken on its behalf afterwards. It does nothing
// otherwise.
func (o *Op) Cancel() {
	if o.pending {
		core.Drop(o.f)
		o.f = nil
		o.pending = false
	}
}

// Stop ends a transfer that reported pending, as at a deadline, without
// losing count of what it did. If the transfer's future is a [Canceller]
// whose Cancel reports true (a write on a completion driver, which the
// kernel may have done in part), the transfer stays pending and Stop
// reports true: the caller polls on, with the same p, until it reports
// done, with what it did before it stopped, or an error matching
// syscall.ECANCELED (see [Cancelled]) if it did nothing; or it calls
// Cancel, giving that up. Otherwise Stop abandons the transfer as Cancel
// does and reports false. Stop does nothing and reports false when no
// transfer is pending; it is called at most once per transfer.
func (o *Op) Stop() bool {
	if o.pending && Cancel(o.f) {
		return true
	}
	o.Cancel()
	return false
}

// Pending reports whether a transfer is in progress: it reported pending
// and was neither completed nor cancelled since.
func (o *Op) Pending() bool { return o.pending }

// WriteLocker is implemented by streams whose writers can take turns:
// the stream has one lock, and a writer that holds it from the first
// byte of a buffer to the last, in as many writes as that takes, sends
// the buffer contiguously with respect to every other writer that does
// the same. The Writes of package weft/lib/co's Conn and Writer take it,
// so each of their Write calls goes out whole, as a net.Conn's does in
// Go. Write futures, [WriteAll] and [Copy] do not take it: concurrent
// ones may interleave where a write is short.
//
// lib/wnet's TCP and Unix streams and [DuplexStream] implement it.
type WriteLocker interface {
	// WriteLock returns the stream's write lock, a weft/lib/wsync Mutex
	// held across waits.
	WriteLock() *wsync.Mutex
}
