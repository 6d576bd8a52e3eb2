//go:build linux

// Package kqemu emulates the BSD kqueue(2)/kevent(2) interface on Linux, so
// that the kqueue driver's logic can be compiled and run on a machine
// without kqueue. It is a test vehicle, not a production event queue: it
// serialises every call on one mutex and makes a poll(2) per collection.
//
// # What it implements
//
// A Kqueue holds knotes keyed by (ident, filter), like the kernel's:
//
//   - EVFILT_READ and EVFILT_WRITE on real descriptors. Readiness comes
//     from Linux itself: every descriptor with a knote is registered once
//     in an internal epoll instance, edge-triggered for both directions,
//     and each edge epoll reports is the "activity" that activates a
//     knote (the kernel's knote() call). When a knote is about to be
//     returned its condition is evaluated again with poll(2), as the BSD
//     kernels do at retrieval, so a knote whose condition no longer holds
//     is dropped from the queue silently. Descriptors epoll refuses
//     (regular files, directories) are always ready in both directions,
//     as regular files are under kqueue.
//   - EVFILT_USER with NOTE_TRIGGER and the fflags controls NOTE_FFNOP,
//     NOTE_FFAND, NOTE_FFOR and NOTE_FFCOPY (NOTE_FFLAGSMASK bits).
//   - The flags EV_ADD (create, or modify udata/fflags of an existing
//     knote; adding enables unless EV_DISABLE is given), EV_DELETE,
//     EV_ENABLE, EV_DISABLE (activity is still recorded while disabled and
//     reported on EV_ENABLE), EV_CLEAR (the state is reset when the event
//     is retrieved: a read or write knote is reported again only after new
//     activity, a user knote only after a new trigger), EV_ONESHOT (the
//     knote is deleted when retrieved), EV_DISPATCH (disabled when
//     retrieved), EV_RECEIPT (an EV_ERROR entry with data 0 for a change
//     that succeeded) and, in results, EV_EOF and EV_ERROR.
//   - EV_EOF is set on a read event when poll(2) reports POLLRDHUP or
//     POLLHUP (the peer shut down its writing side, or the connection is
//     gone) and on a write event when it reports POLLHUP. Its fflags is 0:
//     Linux has no way to read a socket's pending error without consuming
//     it, so the error is left for the next system call on the socket.
//   - The data of a read event on a socket is the number of bytes
//     available (FIONREAD), 0 where that does not apply (a listener); for
//     a write event it is 0.
//   - Errors of changes follow FreeBSD: a failing change (EBADF for a bad
//     descriptor, ENOENT for a change to a missing knote, EINVAL for an
//     unknown filter) or a change with EV_RECEIPT produces an entry with
//     EV_ERROR and the errno in data if the event list has room, and then
//     the call returns those entries without collecting events; without
//     room the call fails with the errno of the first failing change.
//   - The flags a knote reports are those it was created with (EV_ADD,
//     EV_CLEAR, EV_ONESHOT, EV_DISPATCH) plus EV_EOF; a later EV_ADD
//     modifies udata and fflags but not these flags, as on FreeBSD.
//
// The kernel removes a descriptor's knotes when the descriptor is closed;
// the emulation cannot see close(2), so descriptors with knotes must be
// closed with CloseFD.
//
// Several goroutines may call Kevent at once; a change made while another
// goroutine waits in Kevent that activates a knote (a trigger, an EV_ADD of
// a ready descriptor, an EV_ENABLE of an active knote) wakes the waiter, as
// the kernel does. With several waiters, only one is guaranteed to be woken
// for one edge.
package kqemu

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Kevent is struct kevent: one change or one event.
type Kevent struct {
	Ident  uint64
	Filter int16
	Flags  uint16
	Fflags uint32
	Data   int64
	Udata  uint64
}

// Filters, with FreeBSD's values.
const (
	EVFILT_READ  = -0x1
	EVFILT_WRITE = -0x2
	EVFILT_USER  = -0xb
)

// Flags, with FreeBSD's values.
const (
	EV_ADD      = 0x1
	EV_DELETE   = 0x2
	EV_ENABLE   = 0x4
	EV_DISABLE  = 0x8
	EV_ONESHOT  = 0x10
	EV_CLEAR    = 0x20
	EV_RECEIPT  = 0x40
	EV_DISPATCH = 0x80
	EV_ERROR    = 0x4000
	EV_EOF      = 0x8000
)

// EVFILT_USER fflags, with FreeBSD's values.
const (
	NOTE_FFNOP      = 0x00000000
	NOTE_FFAND      = 0x40000000
	NOTE_FFOR       = 0x80000000
	NOTE_FFCOPY     = 0xc0000000
	NOTE_FFCTRLMASK = 0xc0000000
	NOTE_FFLAGSMASK = 0x00ffffff
	NOTE_TRIGGER    = 0x01000000
)

// creationFlags are the flags a knote keeps from the EV_ADD that created
// it and reports with its events.
const creationFlags = EV_ADD | EV_ONESHOT | EV_CLEAR | EV_DISPATCH

type key struct {
	ident  uint64
	filter int16
}

// knote is the state of one (ident, filter) registration.
type knote struct {
	key
	flags    uint16 // creationFlags of the EV_ADD that created it
	udata    uint64
	sfflags  uint32 // saved fflags (EVFILT_USER)
	sdata    int64  // saved data (EVFILT_USER)
	disabled bool
	// active: there is activity to report (an edge since the last
	// retrieval, or a trigger). A read or write knote's condition is
	// checked again before it is reported.
	active bool
	// queued: linked in the Kqueue's queue of knotes to report. Only an
	// active, enabled knote is queued.
	queued     bool
	prev, next *knote
}

// fdEntry is a descriptor with knotes: registered once in the epoll
// instance, or always ready when epoll refuses it.
type fdEntry struct {
	read, write *knote
	always      bool
}

// Kqueue is an emulated kernel event queue. Create it with New; close it
// with Close.
type Kqueue struct {
	mu     sync.Mutex
	cond   sync.Cond // signalled when waiters drops, for Close
	epfd   int
	wakefd int // eventfd that interrupts waiters in epoll_wait

	knotes     map[key]*knote
	fds        map[int]*fdEntry
	head, tail *knote // queue of knotes to report, in activation order

	waiters  int  // goroutines blocked in epoll_wait
	enqueued bool // a knote was queued since the flag was last cleared
	closed   bool
}

// New creates an empty Kqueue.
func New() (*Kqueue, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wfd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(epfd)
		return nil, err
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(wfd)}
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, wfd, &ev); err != nil {
		unix.Close(wfd)
		unix.Close(epfd)
		return nil, err
	}
	kq := &Kqueue{epfd: epfd, wakefd: wfd, knotes: map[key]*knote{}, fds: map[int]*fdEntry{}}
	kq.cond.L = &kq.mu
	return kq, nil
}

// Kevent applies changes in order, then collects at most len(events)
// events, waiting up to timeout for one (nil waits for ever, zero polls).
// It returns the number of entries written to events. See the package
// documentation for the semantics.
func (kq *Kqueue) Kevent(changes, events []Kevent, timeout *unix.Timespec) (int, error) {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.closed {
		return 0, unix.EBADF
	}
	nerr := 0
	for _, c := range changes {
		err := kq.apply(c)
		if err == nil && c.Flags&EV_RECEIPT == 0 {
			continue
		}
		if nerr < len(events) {
			out := c
			out.Flags |= EV_ERROR
			out.Data = 0
			if err != nil {
				out.Data = int64(err.(unix.Errno))
			}
			events[nerr] = out
			nerr++
			continue
		}
		if err != nil {
			kq.wakeWaiters()
			return 0, err
		}
	}
	kq.wakeWaiters()
	if nerr > 0 || len(events) == 0 {
		return nerr, nil
	}
	return kq.scan(events, timeout)
}

// wakeWaiters interrupts a goroutine blocked in epoll_wait if a knote was
// queued since the last call: the waiter then reports it. Called with mu.
func (kq *Kqueue) wakeWaiters() {
	if kq.enqueued && kq.waiters > 0 {
		var one = [8]byte{1}
		_, _ = unix.Write(kq.wakefd, one[:])
	}
	kq.enqueued = false
}

// apply makes one change. Called with mu.
func (kq *Kqueue) apply(c Kevent) error {
	switch c.Filter {
	case EVFILT_READ, EVFILT_WRITE, EVFILT_USER:
	default:
		return unix.EINVAL
	}
	k := kq.knotes[key{c.Ident, c.Filter}]
	if c.Flags&EV_ADD != 0 {
		if k == nil {
			var err error
			if k, err = kq.create(c); err != nil {
				return err
			}
		}
		k.udata = c.Udata
		if c.Filter == EVFILT_USER {
			k.sdata = c.Data
		}
		k.disabled = c.Flags&EV_DISABLE != 0
		if k.disabled {
			kq.dequeue(k)
		}
	} else if k == nil {
		return unix.ENOENT
	}
	if c.Flags&EV_DELETE != 0 {
		kq.remove(k)
		return nil
	}
	if c.Flags&EV_DISABLE != 0 {
		k.disabled = true
		kq.dequeue(k) // activity is kept in k.active
	}
	if c.Flags&EV_ENABLE != 0 {
		k.disabled = false
	}
	switch {
	case c.Filter == EVFILT_USER:
		kq.touchUser(k, c.Fflags)
	case c.Flags&EV_ADD != 0:
		// The kernel evaluates a filter when it is added (or re-added),
		// so a descriptor that is already ready is reported at once.
		if kq.ready(k) {
			kq.activate(k)
		}
	}
	if k.active && !k.disabled {
		kq.enqueue(k)
	}
	return nil
}

// create makes a knote for an EV_ADD change. Called with mu.
func (kq *Kqueue) create(c Kevent) (*knote, error) {
	k := &knote{key: key{c.Ident, c.Filter}, flags: c.Flags & creationFlags}
	if c.Filter != EVFILT_USER {
		if c.Ident > 1<<31-1 {
			return nil, unix.EBADF
		}
		fd := int(c.Ident)
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil {
			return nil, unix.EBADF
		}
		ent := kq.fds[fd]
		if ent == nil {
			ent = &fdEntry{}
			ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLOUT | unix.EPOLLRDHUP | unix.EPOLLET, Fd: int32(fd)}
			switch err := unix.EpollCtl(kq.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err {
			case nil:
			case unix.EPERM:
				ent.always = true // a regular file or a directory
			default:
				return nil, err.(unix.Errno)
			}
			kq.fds[fd] = ent
		}
		if c.Filter == EVFILT_READ {
			ent.read = k
		} else {
			ent.write = k
		}
	}
	kq.knotes[k.key] = k
	return k, nil
}

// touchUser applies an EVFILT_USER change's fflags. Called with mu.
func (kq *Kqueue) touchUser(k *knote, fflags uint32) {
	ffl := fflags & NOTE_FFLAGSMASK
	switch fflags & NOTE_FFCTRLMASK {
	case NOTE_FFAND:
		k.sfflags &= ffl
	case NOTE_FFOR:
		k.sfflags |= ffl
	case NOTE_FFCOPY:
		k.sfflags = ffl
	}
	if fflags&NOTE_TRIGGER != 0 {
		kq.activate(k)
	}
}

// activate records activity on k and queues it if it is enabled.
func (kq *Kqueue) activate(k *knote) {
	k.active = true
	if !k.disabled {
		kq.enqueue(k)
	}
}

func (kq *Kqueue) enqueue(k *knote) {
	if k.queued {
		return
	}
	k.queued = true
	k.prev, k.next = kq.tail, nil
	if kq.tail != nil {
		kq.tail.next = k
	} else {
		kq.head = k
	}
	kq.tail = k
	kq.enqueued = true
}

func (kq *Kqueue) dequeue(k *knote) {
	if !k.queued {
		return
	}
	k.queued = false
	if k.prev != nil {
		k.prev.next = k.next
	} else {
		kq.head = k.next
	}
	if k.next != nil {
		k.next.prev = k.prev
	} else {
		kq.tail = k.prev
	}
	k.prev, k.next = nil, nil
}

// remove deletes k; a descriptor left without knotes leaves the epoll
// instance. Called with mu.
func (kq *Kqueue) remove(k *knote) {
	kq.dequeue(k)
	delete(kq.knotes, k.key)
	if k.filter == EVFILT_USER {
		return
	}
	fd := int(k.ident)
	ent := kq.fds[fd]
	if ent == nil {
		return
	}
	if ent.read == k {
		ent.read = nil
	}
	if ent.write == k {
		ent.write = nil
	}
	if ent.read == nil && ent.write == nil {
		if !ent.always {
			_ = unix.EpollCtl(kq.epfd, unix.EPOLL_CTL_DEL, fd, nil)
		}
		delete(kq.fds, fd)
	}
}

// ready evaluates a read or write knote's condition now.
func (kq *Kqueue) ready(k *knote) bool {
	if ent := kq.fds[int(k.ident)]; ent != nil && ent.always {
		return true
	}
	pfd := []unix.PollFd{{Fd: int32(k.ident), Events: unix.POLLIN | unix.POLLOUT | unix.POLLRDHUP}}
	if !pollNow(pfd) {
		return false
	}
	ok, _ := condition(k.filter, pfd[0].Revents)
	return ok
}

// condition interprets poll(2) events for a filter: whether it is ready,
// and whether the event carries EV_EOF.
func condition(filter int16, revents int16) (ready, eof bool) {
	if filter == EVFILT_READ {
		return revents&(unix.POLLIN|unix.POLLPRI|unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0,
			revents&(unix.POLLRDHUP|unix.POLLHUP) != 0
	}
	return revents&(unix.POLLOUT|unix.POLLHUP|unix.POLLERR) != 0, revents&unix.POLLHUP != 0
}

// pollNow polls fds without waiting; it reports false if poll failed.
func pollNow(fds []unix.PollFd) bool {
	for {
		_, err := unix.Poll(fds, 0)
		switch err {
		case nil:
			return true
		case unix.EINTR:
			continue
		}
		return false
	}
}

// scan collects events, waiting up to timeout for the first. Called with
// mu, which it releases while it waits in epoll_wait.
func (kq *Kqueue) scan(events []Kevent, timeout *unix.Timespec) (int, error) {
	var deadline time.Time
	if timeout != nil {
		deadline = time.Now().Add(time.Duration(timeout.Nano()))
	}
	var buf [128]unix.EpollEvent
	// Take the edges epoll has queued so far.
	for {
		n, err := unix.EpollWait(kq.epfd, buf[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		kq.edges(buf[:n])
		if n < len(buf) {
			break
		}
	}
	for {
		if n := kq.collect(events); n > 0 {
			return n, nil
		}
		ms := -1
		if timeout != nil {
			left := time.Until(deadline)
			if left <= 0 {
				return 0, nil
			}
			ms = int((left + time.Millisecond - 1) / time.Millisecond)
		}
		// A change made by another goroutine from now on sees waiters
		// and writes the eventfd if it queues a knote; an edge from now
		// on is in epoll's ready list. Either ends the wait.
		kq.waiters++
		kq.mu.Unlock()
		n, err := unix.EpollWait(kq.epfd, buf[:], ms)
		kq.mu.Lock()
		kq.waiters--
		if kq.waiters == 0 {
			kq.cond.Broadcast()
		}
		if kq.closed {
			return 0, unix.EBADF
		}
		if err != nil {
			return 0, err // EINTR included: the changes were applied
		}
		kq.edges(buf[:n])
	}
}

// edges activates the knotes of the descriptors epoll reported. Called
// with mu.
func (kq *Kqueue) edges(evs []unix.EpollEvent) {
	for _, ev := range evs {
		fd := int(ev.Fd)
		if fd == kq.wakefd {
			var b [8]byte
			_, _ = unix.Read(kq.wakefd, b[:])
			continue
		}
		ent := kq.fds[fd]
		if ent == nil {
			continue // the knotes were deleted since epoll queued the edge
		}
		if ent.read != nil && ev.Events&(unix.EPOLLIN|unix.EPOLLPRI|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			kq.activate(ent.read)
		}
		if ent.write != nil && ev.Events&(unix.EPOLLOUT|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
			kq.activate(ent.write)
		}
	}
	kq.enqueued = false // this goroutine is the one that reports them
}

// collect moves up to len(events) queued knotes into events. Read and
// write knotes are checked again with one poll(2) and dropped if their
// condition no longer holds. Called with mu.
func (kq *Kqueue) collect(events []Kevent) int {
	var cand []*knote
	var pfds []unix.PollFd
	index := map[int]int{}
	for k := kq.head; k != nil && len(cand) < len(events); k = k.next {
		cand = append(cand, k)
		if k.filter == EVFILT_USER {
			continue
		}
		fd := int(k.ident)
		if ent := kq.fds[fd]; ent.always {
			continue
		}
		if _, ok := index[fd]; !ok {
			index[fd] = len(pfds)
			pfds = append(pfds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN | unix.POLLOUT | unix.POLLRDHUP})
		}
	}
	if len(pfds) > 0 && !pollNow(pfds) {
		for i := range pfds {
			pfds[i].Revents = 0
		}
	}
	n := 0
	var requeue []*knote
	for _, k := range cand {
		kq.dequeue(k)
		ev := Kevent{Ident: k.ident, Filter: k.filter, Flags: k.flags, Udata: k.udata}
		if k.filter == EVFILT_USER {
			ev.Fflags, ev.Data = k.sfflags, k.sdata
		} else {
			fd := int(k.ident)
			ready, eof := true, false
			if i, ok := index[fd]; ok {
				ready, eof = condition(k.filter, pfds[i].Revents)
			}
			if !ready {
				k.active = false
				continue
			}
			if eof {
				ev.Flags |= EV_EOF
			}
			if k.filter == EVFILT_READ && !kq.fds[fd].always {
				if avail, err := unix.IoctlGetInt(fd, unix.SIOCINQ); err == nil {
					ev.Data = int64(avail)
				}
			}
		}
		events[n] = ev
		n++
		switch {
		case k.flags&EV_ONESHOT != 0:
			kq.remove(k)
		case k.flags&EV_DISPATCH != 0:
			k.disabled = true
			if k.flags&EV_CLEAR != 0 {
				k.active = false
			}
		case k.flags&EV_CLEAR != 0:
			k.active = false
		default:
			requeue = append(requeue, k) // level-triggered: reported while it holds
		}
	}
	for _, k := range requeue {
		kq.enqueue(k)
	}
	kq.enqueued = false
	return n
}

// CloseFD closes a descriptor and deletes its knotes, as close(2) does on
// the BSDs. Descriptors with knotes must be closed this way.
func (kq *Kqueue) CloseFD(fd int) error {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if fd >= 0 {
		for _, f := range []int16{EVFILT_READ, EVFILT_WRITE} {
			if k := kq.knotes[key{uint64(fd), f}]; k != nil {
				kq.remove(k)
			}
		}
	}
	return unix.Close(fd)
}

// Close releases the Kqueue: goroutines waiting in Kevent return EBADF,
// and Close waits for them before closing its descriptors. Calling it
// again returns EBADF.
func (kq *Kqueue) Close() error {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	if kq.closed {
		return unix.EBADF
	}
	kq.closed = true
	for kq.waiters > 0 {
		var one = [8]byte{1}
		_, _ = unix.Write(kq.wakefd, one[:])
		kq.cond.Wait()
	}
	unix.Close(kq.wakefd)
	return unix.Close(kq.epfd)
}

// Knotes returns the number of knotes, for tests.
func (kq *Kqueue) Knotes() int {
	kq.mu.Lock()
	defer kq.mu.Unlock()
	return len(kq.knotes)
}
