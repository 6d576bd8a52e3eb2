//go:build linux

package iouring

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/slab"
)

// recKind is what a handle refers to.
type recKind uint8

const (
	kindListener recKind = iota
	kindStream
	kindDatagram
	kindFile
)

// fileRec is the driver's record of a handle: its descriptor and the
// operations outstanding on it.
//
// mu guards everything below it. It is held while an operation on the
// handle is submitted (so no entry naming the descriptor is queued after
// the handle closes), while a plain system call uses the descriptor (so a
// close never lets it act on a reused number), and by closeRec.
type fileRec struct {
	slab.Entry // the slot generation, set by the slab
	kind       recKind
	network    string

	mu sync.Mutex
	fd int
	// closed is set once; reason is the error of operations after it.
	closed bool
	reason error
	// head is the list of outstanding operations: submitted and neither
	// resolved to their future nor dropped. closeRec fails them.
	head *op
	// lastPos is the SQ position after the last entry naming fd; closing
	// fd waits until the kernel consumed it (see waitConsumed).
	lastPos uint32
	// unlinkPath is a Unix listener's socket file, removed at close.
	unlinkPath string
	// kept are the results stream reads received for readers that had
	// dropped them, oldest first; the next reads take them before
	// anything is submitted (see cancelsafe_linux.go).
	kept []keptResult
}

func (r *fileRec) link(o *op) {
	o.linked = true
	o.prev, o.next = nil, r.head
	if r.head != nil {
		r.head.prev = o
	}
	r.head = o
}

func (r *fileRec) unlink(o *op) {
	if !o.linked {
		return
	}
	o.linked = false
	if o.prev != nil {
		o.prev.next = o.next
	} else {
		r.head = o.next
	}
	if o.next != nil {
		o.next.prev = o.prev
	}
	o.prev, o.next = nil, nil
}

// register records fd under a new handle. On failure the caller still
// owns fd.
func (d *Driver) register(fd int, kind recKind, network string) (core.Handle, *fileRec, error) {
	rec := &fileRec{kind: kind, network: network, fd: fd}
	h, ok := d.handles.Insert(rec)
	if !ok {
		return 0, nil, errDriverClosed
	}
	return h, rec, nil
}

// lookup returns h's record or the error of a stale handle.
func (d *Driver) lookup(h core.Handle) (*fileRec, error) {
	if rec := d.handles.Get(h); rec != nil {
		return rec, nil
	}
	if d.closed.Load() {
		return nil, errDriverClosed
	}
	return nil, errClosed
}

// withFD runs f on h's descriptor under the record's lock, so the
// descriptor stays open (and is not reused) for the duration. f must not
// block.
func (d *Driver) withFD(h core.Handle, f func(rec *fileRec) error) error {
	rec, err := d.lookup(h)
	if err != nil {
		return err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.closed {
		return rec.reason
	}
	return f(rec)
}

// CloseHandle releases h: every operation outstanding on it fails with
// net.ErrClosed (an accepted connection or a read's data that completed
// meanwhile is discarded, the connection closed), what the kernel still
// runs is cancelled, and the descriptor is closed once the kernel has
// read every entry naming it. A Unix listener's socket file is removed.
func (d *Driver) CloseHandle(h core.Handle) error {
	rec := d.handles.Remove(h)
	if rec == nil {
		_, err := d.lookup(h)
		return err
	}
	d.closeRec(rec, errClosed, true)
	return nil
}

// closeRec closes a record: outstanding operations resolve with reason;
// those the kernel holds are abandoned (their completion is cleaned up
// when it arrives) and cancelled. With closeFD, the descriptor is closed
// after the cancels and every earlier entry naming it have reached the
// kernel, which holds its own reference to the file for the operations
// in flight.
func (d *Driver) closeRec(rec *fileRec, reason error, closeFD bool) {
	rec.mu.Lock()
	if rec.closed {
		rec.mu.Unlock()
		return
	}
	rec.closed, rec.reason = true, reason
	var wakers []core.Waker
	cancelled, flush := false, false
	for o := rec.head; o != nil; {
		next := o.next
		o.linked, o.prev, o.next = false, nil, nil
		if w, ud, inFlight := o.fail(reason); inFlight {
			cancelled = true
			flush = d.cancel(ud) || flush
			if w != nil {
				wakers = append(wakers, w)
			}
		} else if w != nil {
			wakers = append(wakers, w)
		}
		o = next
	}
	rec.head = nil
	rec.kept = nil
	if closeFD && rec.fd >= 0 {
		if cancelled || flush {
			_ = d.flush()
		}
		d.waitConsumed(rec.lastPos)
		if rec.unlinkPath != "" {
			_ = unix.Unlink(rec.unlinkPath)
		}
		_ = unix.Close(rec.fd)
		rec.fd = -1
	} else if flush {
		_ = d.flush()
	}
	rec.mu.Unlock()
	for _, w := range wakers {
		w.Wake()
	}
}

// closedErrOf returns the error of an operation on a closed record.
func closedErrOf(rec *fileRec) error {
	if rec.reason != nil {
		return rec.reason
	}
	return errClosed
}
