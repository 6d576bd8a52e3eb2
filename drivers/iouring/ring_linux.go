//go:build linux

package iouring

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ring is one io_uring instance: its descriptor and the three shared
// memory regions. It knows nothing of operations; the driver serialises
// its use (see the package documentation):
//
//   - the SQ side (sqTail, next, push, pending) belongs to whoever holds
//     Driver.sqMu;
//   - the CQ side (reap) belongs to whoever holds Driver.parkMu;
//   - enter may be called by anyone, concurrently: the kernel serialises
//     submissions under its own lock, and to_submit only bounds how many
//     of the published entries one call consumes.
type ring struct {
	fd       int
	features uint32
	flags    uint32
	sqpoll   bool

	sqMem, cqMem, sqeMem []byte

	// Pointers into the SQ ring.
	sqHead  *uint32 // written by the kernel
	sqTail  *uint32 // written by us (release), read by the kernel
	sqFlags *uint32 // written by the kernel (NEED_WAKEUP, CQ_OVERFLOW)
	sqMask  uint32
	sqSize  uint32
	sqes    unsafe.Pointer
	// tail is our copy of *sqTail: the index of the next free entry.
	tail uint32

	// Pointers into the CQ ring.
	cqHead *uint32 // written by us (release), read by the kernel
	cqTail *uint32 // written by the kernel (release)
	cqMask uint32
	cqSize uint32
	cqes   unsafe.Pointer
}

// ringOptions are the set-up choices of a ring.
type ringOptions struct {
	entries    uint32
	sqpoll     bool
	sqpollIdle time.Duration
}

// newRing sets up an io_uring instance and maps its regions. On
// IORING_FEAT_SINGLE_MMAP kernels (5.4+) the SQ and CQ rings share one
// mapping, as the kernel allows.
func newRing(o ringOptions) (*ring, error) {
	var p params
	p.flags = setupClamp
	if o.sqpoll {
		p.flags |= setupSQPoll
		p.sqThreadIdle = uint32(o.sqpollIdle / time.Millisecond)
	}
	fd, err := sysSetup(o.entries, &p)
	if err != nil {
		return nil, os.NewSyscallError("io_uring_setup", err)
	}
	r := &ring{fd: fd, features: p.features, flags: p.flags, sqpoll: o.sqpoll}
	if err := r.mapRegions(&p); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *ring) mapRegions(p *params) error {
	sqLen := int(p.sqOff.array + p.sqEntries*4)
	cqLen := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	single := p.features&featSingleMmap != 0
	if single {
		sqLen = max(sqLen, cqLen)
	}
	prot, flags := unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE
	var err error
	if r.sqMem, err = unix.Mmap(r.fd, offSQRing, sqLen, prot, flags); err != nil {
		return os.NewSyscallError("mmap", err)
	}
	if single {
		r.cqMem = r.sqMem
	} else if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqLen, prot, flags); err != nil {
		return os.NewSyscallError("mmap", err)
	}
	sqeLen := int(p.sqEntries) * int(unsafe.Sizeof(sqe{}))
	if r.sqeMem, err = unix.Mmap(r.fd, offSQEs, sqeLen, prot, flags); err != nil {
		return os.NewSyscallError("mmap", err)
	}
	u32 := func(mem []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }
	r.sqHead = u32(r.sqMem, p.sqOff.head)
	r.sqTail = u32(r.sqMem, p.sqOff.tail)
	r.sqFlags = u32(r.sqMem, p.sqOff.flags)
	r.sqMask = *u32(r.sqMem, p.sqOff.ringMask)
	r.sqSize = *u32(r.sqMem, p.sqOff.ringEntries)
	r.sqes = unsafe.Pointer(&r.sqeMem[0])
	r.tail = atomic.LoadUint32(r.sqTail)
	// The SQ array maps ring positions to SQE indices. The identity,
	// written once, lets position i always use SQE i.
	array := unsafe.Slice(u32(r.sqMem, p.sqOff.array), r.sqSize)
	for i := range array {
		array[i] = uint32(i)
	}
	r.cqHead = u32(r.cqMem, p.cqOff.head)
	r.cqTail = u32(r.cqMem, p.cqOff.tail)
	r.cqMask = *u32(r.cqMem, p.cqOff.ringMask)
	r.cqSize = *u32(r.cqMem, p.cqOff.ringEntries)
	r.cqes = unsafe.Pointer(&r.cqMem[p.cqOff.cqes])
	return nil
}

// close unmaps the regions and closes the ring. The kernel cancels
// whatever is still in flight when the last reference goes.
func (r *ring) close() {
	if r.sqeMem != nil {
		unix.Munmap(r.sqeMem)
	}
	if r.cqMem != nil && &r.cqMem[0] != &r.sqMem[0] {
		unix.Munmap(r.cqMem)
	}
	if r.sqMem != nil {
		unix.Munmap(r.sqMem)
	}
	r.sqeMem, r.cqMem, r.sqMem = nil, nil, nil
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

func (r *ring) has(feature uint32) bool { return r.features&feature != 0 }

// ---------------------------------------------------------------------------
// Submission side (caller holds Driver.sqMu).

// space returns the number of free SQ entries. The kernel's head is
// loaded with acquire ordering: an entry it has moved past has been read
// and may be overwritten.
func (r *ring) space() uint32 {
	return r.sqSize - (r.tail - atomic.LoadUint32(r.sqHead))
}

// pending returns the number of published entries the kernel has not
// consumed yet.
func (r *ring) pending() uint32 {
	return r.tail - atomic.LoadUint32(r.sqHead)
}

// next returns the SQE at the tail, zeroed, or nil if the ring is full.
// The entry is not visible to the kernel until publish.
func (r *ring) next() *sqe {
	if r.space() == 0 {
		return nil
	}
	e := (*sqe)(unsafe.Add(r.sqes, uintptr(r.tail&r.sqMask)*unsafe.Sizeof(sqe{})))
	*e = sqe{}
	r.tail++
	return e
}

// publish makes every entry returned by next visible to the kernel: the
// release store of the tail orders the entries' contents before it (the
// kernel loads the tail with acquire ordering).
func (r *ring) publish() {
	atomic.StoreUint32(r.sqTail, r.tail)
}

// needsWakeup reports whether an SQPOLL thread went idle and must be
// woken with IORING_ENTER_SQ_WAKEUP to see new entries.
func (r *ring) needsWakeup() bool {
	return r.sqpoll && atomic.LoadUint32(r.sqFlags)&sqNeedWakeup != 0
}

// submit hands the published entries to the kernel without waiting for
// completions: an io_uring_enter with every pending entry as to_submit,
// or, under SQPOLL, a wake-up of the polling thread if it sleeps.
// Several goroutines may call it at once.
func (r *ring) submit(pending uint32) error {
	if r.sqpoll {
		if r.needsWakeup() {
			_, err := sysEnter(r.fd, 0, 0, enterSQWakeup, nil, 0)
			return enterErr(err)
		}
		return nil
	}
	if pending == 0 {
		return nil
	}
	_, err := sysEnter(r.fd, pending, 0, 0, nil, 0)
	return enterErr(err)
}

// makeRoom waits until the SQ has a free entry (caller holds sqMu):
// without SQPOLL it submits what is there, which the kernel consumes at
// once; under SQPOLL it wakes the polling thread and waits for it to
// consume (IORING_ENTER_SQ_WAIT). Nothing is dropped: the caller retries
// next until it gets an entry.
func (r *ring) makeRoom() error {
	for tries := 0; r.space() == 0; tries++ {
		var err error
		if r.sqpoll {
			_, err = sysEnter(r.fd, 0, 0, enterSQWakeup|enterSQWait, nil, 0)
		} else {
			_, err = sysEnter(r.fd, r.pending(), 0, 0, nil, 0)
		}
		if err = enterErr(err); err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EBUSY) {
			return err
		}
		if tries > 0 {
			// The kernel is short of memory or its CQ overflow list is
			// full until the parker reaps; let it run.
			runtime.Gosched()
		}
	}
	return nil
}

// enterErr maps a failed io_uring_enter: EINTR is no failure (the entries
// stay published and the next call submits them).
func enterErr(err error) error {
	if err == nil || errors.Is(err, unix.EINTR) {
		return nil
	}
	return fmt.Errorf("iouring: %w", os.NewSyscallError("io_uring_enter", err))
}

// ---------------------------------------------------------------------------
// Completion side (caller holds Driver.parkMu).

// completions returns the CQ's current head and tail; the entries between
// them are ready to read. The tail is loaded with acquire ordering, so
// the entries' contents, written before the kernel's release store, are
// visible.
func (r *ring) completions() (head, tail uint32) {
	return *r.cqHead, atomic.LoadUint32(r.cqTail)
}

// cqeAt returns the CQ entry at position i.
func (r *ring) cqeAt(i uint32) *cqe {
	return (*cqe)(unsafe.Add(r.cqes, uintptr(i&r.cqMask)*unsafe.Sizeof(cqe{})))
}

// consumed tells the kernel that every entry before head has been read:
// the release store orders our reads before the kernel reuses the slots.
func (r *ring) consumed(head uint32) {
	atomic.StoreUint32(r.cqHead, head)
}

// overflowed reports whether completions wait in the kernel's overflow
// list (the CQ was full); an io_uring_enter with GETEVENTS moves them in.
func (r *ring) overflowed() bool {
	return atomic.LoadUint32(r.sqFlags)&sqCQOverflow != 0
}
