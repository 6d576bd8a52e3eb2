package server

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins/internal/wire"
)

// maxRead bounds the buffer a plugin allocates for one read, whatever the
// host asks; the host never asks for more.
const maxRead = wire.MaxIO

// DriverService serves driver sessions: each Session stream runs a fresh
// driver from New under a private poll loop.
type DriverService struct {
	New func() (core.Driver, error)
	Log *slog.Logger
}

// Register registers the service on s.
func (ds *DriverService) Register(s *grpc.Server) {
	s.RegisterService(wire.SessionDesc(wire.DriverServiceName), ds)
}

// Session implements wire.SessionServer. It returns when the host ends
// the stream (or it breaks), after every pending operation was dropped and
// the driver closed.
func (ds *DriverService) Session(stream grpc.ServerStream) error {
	drv, err := ds.New()
	if err != nil {
		return fmt.Errorf("creating the driver: %w", err)
	}
	s := &driverSession{
		drv:     drv,
		stream:  stream,
		log:     ds.Log,
		ops:     map[uint64]*pop{},
		handles: map[uint64]*hstate{},
	}
	s.dgram, _ = drv.(core.DatagramIO)
	s.scond = sync.NewCond(&s.smu)
	loopDone := make(chan struct{})
	sendDone := make(chan struct{})
	go func() { defer close(loopDone); s.loop() }()
	go func() { defer close(sendDone); s.sender() }()

	// This goroutine receives. A receive error (the host closed its side,
	// or the connection broke) stops the loop, which drops every pending
	// operation and closes the driver, then the sender flushes and exits.
	var recvErr error
	for {
		m := new(wrapperspb.BytesValue)
		if recvErr = stream.RecvMsg(m); recvErr != nil {
			break
		}
		s.mu.Lock()
		s.inbox = append(s.inbox, m.Value)
		unpark := s.sleeping && !s.notified
		if unpark {
			s.notified = true
		}
		s.mu.Unlock()
		if unpark {
			s.drv.Unpark()
		}
	}
	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.drv.Unpark()
	<-loopDone
	s.smu.Lock()
	s.sdone = true
	s.scond.Signal()
	s.smu.Unlock()
	<-sendDone
	return nil
}

// driverSession is one host driver's view of a plugin-side driver.
//
// Three goroutines share it: the receiver (the gRPC handler) appends frames
// to inbox; the loop owns the driver, the operation table and the handle
// table and is the only one to poll futures or call the driver; the sender
// writes completion frames. Wakers run on the loop goroutine (inside Park)
// for a readiness driver, but any goroutine may wake: a wake appends to
// ready under mu and unparks the driver if the loop sleeps in Park.
type driverSession struct {
	drv    core.Driver
	dgram  core.DatagramIO
	stream grpc.ServerStream
	log    *slog.Logger

	mu       sync.Mutex
	inbox    [][]byte
	ready    []*pop
	sleeping bool // the loop is in (or about to enter) a blocking Park
	notified bool // an Unpark was issued since the loop went to sleep
	stopped  bool

	// Owned by the loop.
	ops        map[uint64]*pop
	handles    map[uint64]*hstate // wire handle → its state
	lingering  int                // closed handles still flushing writes
	nextHandle uint64
	out        wire.Enc

	// The sender's queue: completions not yet sent.
	smu     sync.Mutex
	scond   *sync.Cond
	pending []byte
	sdone   bool
	sendErr bool
}

// pop is one pending asynchronous operation in the plugin. It is its own
// waker.
type pop struct {
	s      *driverSession
	id     uint64
	op     byte
	wh     uint64  // the handle operated on, if any
	hs     *hstate // for opPump: the handle whose queue it writes
	queued bool    // in s.ready; guarded by s.mu
	done   bool    // completed or cancelled; loop-owned
	cx     *core.Context
	buf    []byte

	fInt  core.Future[core.Result[int]]
	fAcc  core.Future[core.Result[core.Accepted]]
	fConn core.Future[core.Result[core.Handle]]
	fDg   core.Future[core.Result[core.Datagram]]
}

// Wake queues the operation for a poll on the loop.
func (p *pop) Wake() {
	s := p.s
	s.mu.Lock()
	if p.queued {
		s.mu.Unlock()
		return
	}
	p.queued = true
	s.ready = append(s.ready, p)
	unpark := s.sleeping && !s.notified
	if unpark {
		s.notified = true
	}
	s.mu.Unlock()
	if unpark {
		s.drv.Unpark()
	}
}

// loop runs the driver: it starts the operations of incoming frames, polls
// the operations whose wakers fired, sends the completions, and parks the
// driver when there is nothing else to do.
func (s *driverSession) loop() {
	var frames [][]byte
	var ready []*pop
	for {
		s.mu.Lock()
		frames, s.inbox = s.inbox, frames[:0]
		ready, s.ready = s.ready, ready[:0]
		for _, p := range ready {
			p.queued = false
		}
		stopped := s.stopped
		s.mu.Unlock()

		for i, f := range frames {
			s.handleFrame(f)
			frames[i] = nil
		}
		for i, p := range ready {
			if !p.done {
				s.poll(p)
			}
			ready[i] = nil
		}
		if s.lingering > 0 {
			s.expireLingering(time.Now())
		}
		s.flush()
		if stopped {
			s.shutdown()
			return
		}

		// Sleep in Park only when nothing is queued. The flags are set
		// under mu, so a receiver or waker that appends after this check
		// sees sleeping and unparks; Unpark makes the next Park return if
		// it comes before it.
		s.mu.Lock()
		idle := len(s.inbox) == 0 && len(s.ready) == 0 && !s.stopped
		s.sleeping = idle
		s.notified = false
		s.mu.Unlock()
		timeout := time.Duration(0)
		if idle {
			timeout = -1
			if s.lingering > 0 {
				timeout = time.Second
			}
		}
		if err := s.drv.Park(timeout); err != nil && s.log != nil {
			s.log.Error("driver park failed", "error", err)
		}
		s.mu.Lock()
		s.sleeping = false
		s.mu.Unlock()
	}
}

// shutdown drops every pending operation and closes the driver.
func (s *driverSession) shutdown() {
	for id, p := range s.ops {
		p.drop()
		delete(s.ops, id)
	}
	for _, hs := range s.handles {
		if hs.wpop != nil {
			hs.wpop.drop()
		}
	}
	if err := s.drv.Close(); err != nil && s.log != nil {
		s.log.Warn("closing the driver", "error", err)
	}
}

// flush hands the completions encoded so far to the sender. When the
// sender is idle the buffer changes hands without a copy.
func (s *driverSession) flush() {
	if len(s.out.B) == 0 {
		return
	}
	s.smu.Lock()
	if s.pending == nil {
		s.pending = s.out.B
		s.out.B = nil
	} else {
		s.pending = append(s.pending, s.out.B...)
		s.out.B = s.out.B[:0]
	}
	s.scond.Signal()
	s.smu.Unlock()
}

// sender sends completion frames until the session ends.
func (s *driverSession) sender() {
	for {
		s.smu.Lock()
		for s.pending == nil && !s.sdone {
			s.scond.Wait()
		}
		buf := s.pending
		s.pending = nil
		s.smu.Unlock()
		if buf == nil {
			return
		}
		if s.sendErr {
			continue // the host is gone; keep draining until done
		}
		// The frame is a fresh buffer per message: gRPC may keep the
		// message after SendMsg returns, so it is never reused.
		if err := s.stream.SendMsg(wrapperspb.Bytes(buf)); err != nil {
			s.sendErr = true
		}
	}
}

func (s *driverSession) lookup(wh uint64) (core.Handle, bool) {
	hs, ok := s.handles[wh]
	if !ok || hs.closing {
		return 0, false
	}
	return hs.h, true
}

func (s *driverSession) register(h core.Handle) uint64 {
	s.nextHandle++
	s.handles[s.nextHandle] = &hstate{h: h, wh: s.nextHandle}
	return s.nextHandle
}

// handleFrame executes the records of one request frame.
func (s *driverSession) handleFrame(f []byte) {
	d := wire.NewDec(f)
	for d.More() {
		op := d.U8()
		id := d.Uint()
		if d.Err() != nil {
			break
		}
		s.handle(d, op, id)
	}
	if d.Err() != nil {
		if s.log != nil {
			s.log.Error("malformed request frame; the host will end the session", "error", d.Err())
		}
		// The rest of the frame is lost: refuse it (id 0, see package
		// wire), and the host ends the session.
		s.complete(0, wire.StatusErr)
		s.out.PutError(d.Err())
	}
}

// complete starts a completion record for id.
func (s *driverSession) complete(id uint64, status byte) {
	s.out.Uint(id)
	s.out.U8(status)
}

func (s *driverSession) fail(id uint64, err error) {
	if id == 0 {
		return
	}
	s.complete(id, wire.StatusErr)
	s.out.PutError(err)
}

func (s *driverSession) ok(id uint64) bool {
	if id == 0 {
		return false
	}
	s.complete(id, wire.StatusOK)
	return true
}

// opPump marks the pop that writes a handle's queue.
const opPump = 0xff

// errUnsupported is the error of an optional operation the driver lacks.
var errUnsupported = errors.New("the plugin's driver does not support this operation")

// handle executes one request.
func (s *driverSession) handle(d *wire.Dec, op byte, id uint64) {
	switch op {
	case wire.OpListen, wire.OpBind:
		network, address, opts := d.String(), d.String(), d.Opts()
		if d.Err() != nil {
			return
		}
		var h core.Handle
		var a core.Addr
		var err error
		if op == wire.OpListen {
			h, a, err = s.drv.Listen(network, address, opts)
		} else if s.dgram != nil {
			h, a, err = s.dgram.Bind(network, address, opts)
		} else {
			err = errUnsupported
		}
		if err != nil {
			s.fail(id, err)
			return
		}
		wh := s.register(h)
		if s.ok(id) {
			s.out.Uint(wh)
			s.out.PutAddr(a)
		}
	case wire.OpConnect:
		network, address, opts := d.String(), d.String(), d.Opts()
		if d.Err() != nil {
			return
		}
		s.start(&pop{id: id, op: op, fConn: s.drv.Connect(network, address, opts)})
	case wire.OpAccept:
		wh := d.Uint()
		if d.Err() != nil {
			return
		}
		h, ok := s.lookup(wh)
		if !ok {
			s.fail(id, net.ErrClosed)
			return
		}
		s.start(&pop{id: id, op: op, wh: wh, fAcc: s.drv.Accept(h)})
	case wire.OpRead, wire.OpRecvFrom:
		wh, n := d.Uint(), d.Uint()
		if d.Err() != nil {
			return
		}
		h, ok := s.lookup(wh)
		if !ok {
			s.fail(id, net.ErrClosed)
			return
		}
		if n > maxRead {
			n = maxRead
		}
		buf := make([]byte, n)
		p := &pop{id: id, op: op, wh: wh, buf: buf}
		switch {
		case op == wire.OpRead:
			p.fInt = s.drv.Read(h, buf)
		case s.dgram != nil:
			p.fDg = s.dgram.RecvFrom(h, buf)
		default:
			s.fail(id, errUnsupported)
			return
		}
		s.start(p)
	case wire.OpWrite:
		wh := d.Uint()
		// The data aliases the request frame: the write is made from the
		// bytes as they arrived, without a copy in this process.
		data := d.Bytes()
		if d.Err() != nil {
			return
		}
		hs := s.handles[wh]
		switch {
		case hs == nil || hs.closing:
			s.fail(id, net.ErrClosed)
		case hs.werr != nil:
			s.fail(id, hs.werr)
		default:
			hs.wq = append(hs.wq, wbWrite{id: id, data: data})
			if len(hs.wq) == 1 {
				s.pump(hs)
			}
		}
	case wire.OpSendTo:
		wh := d.Uint()
		data, to := d.Bytes(), d.String()
		if d.Err() != nil {
			return
		}
		h, ok := s.lookup(wh)
		if !ok {
			s.fail(id, net.ErrClosed)
			return
		}
		if s.dgram == nil {
			s.fail(id, errUnsupported)
			return
		}
		s.start(&pop{id: id, op: op, wh: wh, fInt: s.dgram.SendTo(h, data, to)})
	case wire.OpShutdown, wire.OpSetOption, wire.OpLocalAddr, wire.OpPeerAddr,
		wire.OpCloseHandle, wire.OpConnectDatagram, wire.OpJoinGroup:
		s.syncOp(d, op, id)
	case wire.OpCancel:
		if p := s.ops[id]; p != nil {
			p.drop()
			delete(s.ops, id)
			s.complete(id, wire.StatusCancelled)
		}
	default:
		// The rest of the frame cannot be parsed.
		d.Failf("unknown operation %d", op)
	}
}

// syncOp executes an operation that completes at once.
func (s *driverSession) syncOp(d *wire.Dec, op byte, id uint64) {
	wh := d.Uint()
	var how, opt byte
	var value int64
	var a1, a2 string
	switch op {
	case wire.OpShutdown:
		how = d.U8()
	case wire.OpSetOption:
		opt, value = d.U8(), d.Int()
	case wire.OpConnectDatagram:
		a1 = d.String()
	case wire.OpJoinGroup:
		a1, a2 = d.String(), d.String()
	}
	if d.Err() != nil {
		return
	}
	h, ok := s.lookup(wh)
	if !ok {
		s.fail(id, net.ErrClosed)
		return
	}
	hs := s.handles[wh]
	var err error
	var addr core.Addr
	switch op {
	case wire.OpShutdown:
		if len(hs.wq) > 0 && core.ShutdownHow(how) != core.ShutdownRead {
			// The write side closes after the queued writes, which the
			// host already reported written.
			hs.shutdown = core.ShutdownHow(how)
			break
		}
		err = s.drv.Shutdown(h, core.ShutdownHow(how))
	case wire.OpSetOption:
		err = s.drv.SetOption(h, core.SocketOption(opt), int(value))
	case wire.OpLocalAddr:
		addr, err = s.drv.LocalAddr(h)
	case wire.OpPeerAddr:
		addr, err = s.drv.PeerAddr(h)
	case wire.OpCloseHandle:
		s.closeHandle(hs)
	case wire.OpConnectDatagram:
		if s.dgram == nil {
			err = errUnsupported
		} else {
			err = s.dgram.ConnectDatagram(h, a1)
		}
	case wire.OpJoinGroup:
		if s.dgram == nil {
			err = errUnsupported
		} else {
			err = s.dgram.JoinGroup(h, a1, a2)
		}
	}
	if err != nil {
		s.fail(id, err)
		return
	}
	if s.ok(id) && (op == wire.OpLocalAddr || op == wire.OpPeerAddr) {
		s.out.PutAddr(addr)
	}
}

// start polls a new asynchronous operation once and keeps it if pending.
func (s *driverSession) start(p *pop) {
	p.s = s
	p.cx = core.NewContext(p)
	if p.id != 0 {
		s.ops[p.id] = p
	}
	s.poll(p)
}

// poll polls p and, if it is ready, writes its completion.
func (s *driverSession) poll(p *pop) {
	if p.op == opPump {
		if p.hs.wpop == p {
			s.pump(p.hs)
		}
		return
	}
	switch {
	case p.fInt != nil:
		r, ok := p.fInt.Poll(p.cx)
		if !ok {
			return
		}
		s.finish(p)
		if r.Err != nil {
			s.fail(p.id, r.Err)
		} else if s.ok(p.id) {
			if p.op == wire.OpRead {
				// The one copy of read data in this process: from the
				// driver's buffer into the completion frame.
				s.out.Bytes(p.buf[:r.Value])
			} else {
				s.out.Uint(uint64(r.Value))
			}
		}
	case p.fDg != nil:
		r, ok := p.fDg.Poll(p.cx)
		if !ok {
			return
		}
		s.finish(p)
		if r.Err != nil {
			s.fail(p.id, r.Err)
		} else if s.ok(p.id) {
			s.out.Bytes(p.buf[:r.Value.N])
			s.out.PutAddr(r.Value.From)
		}
	case p.fAcc != nil:
		r, ok := p.fAcc.Poll(p.cx)
		if !ok {
			return
		}
		s.finish(p)
		if r.Err != nil {
			s.fail(p.id, r.Err)
			return
		}
		wh := s.register(r.Value.Handle)
		if s.ok(p.id) {
			s.out.Uint(wh)
			s.out.PutAddr(r.Value.Peer)
		} else {
			s.closeOrphan(wh)
		}
	case p.fConn != nil:
		r, ok := p.fConn.Poll(p.cx)
		if !ok {
			return
		}
		s.finish(p)
		if r.Err != nil {
			s.fail(p.id, r.Err)
			return
		}
		wh := s.register(r.Value)
		if s.ok(p.id) {
			s.out.Uint(wh)
		} else {
			s.closeOrphan(wh)
		}
	}
}

// closeOrphan closes a handle nobody asked for.
func (s *driverSession) closeOrphan(wh uint64) {
	if hs, ok := s.handles[wh]; ok {
		s.closeHandle(hs)
	}
}

// hstate is a handle of the session: the driver's handle and its queue of
// writes.
//
// Writes are write-behind: the host reports a stream write complete as
// soon as it is queued for the plugin (within its window), as a kernel
// reports a write complete once the bytes are in the socket's buffer. The
// plugin then owes the host those bytes, in order: the queue is written
// one write at a time, each to its end, and a shutdown of the write side
// or a close waits for the queue to drain (a close lingers at most
// lingerLimit). A write error is kept and fails every later write, which
// is how the host learns of it.
type hstate struct {
	h        core.Handle
	wh       uint64
	wq       []wbWrite
	wpop     *pop // the write in progress, for the queue's head
	werr     error
	shutdown core.ShutdownHow // deferred until the queue drains
	closing  bool             // closed by the host; lingering for writes
	deadline time.Time
}

// wbWrite is a queued write: its request id and the bytes still owed.
type wbWrite struct {
	id   uint64
	data []byte
}

// lingerLimit bounds how long a closed handle keeps writing queued data
// to a peer that does not read.
const lingerLimit = 30 * time.Second

// pump writes the queue's head until the queue is empty or a write is
// pending; a write error fails the rest of the queue.
func (s *driverSession) pump(hs *hstate) {
	for len(hs.wq) > 0 {
		head := &hs.wq[0]
		if hs.wpop == nil {
			p := &pop{s: s, op: opPump, hs: hs}
			p.cx = core.NewContext(p)
			p.fInt = s.drv.Write(hs.h, head.data)
			hs.wpop = p
		}
		r, ok := hs.wpop.fInt.Poll(hs.wpop.cx)
		if !ok {
			return
		}
		hs.wpop.done = true
		hs.wpop = nil
		if r.Err != nil {
			hs.werr = r.Err
			for _, w := range hs.wq {
				s.fail(w.id, r.Err)
			}
			clear(hs.wq)
			hs.wq = hs.wq[:0]
			break
		}
		head.data = head.data[r.Value:]
		if len(head.data) > 0 {
			continue
		}
		if s.ok(head.id) {
			s.out.Uint(0)
		}
		hs.wq[0] = wbWrite{}
		hs.wq = hs.wq[1:]
	}
	hs.wq = nil
	if hs.closing {
		s.finishClose(hs)
		return
	}
	if hs.shutdown != 0 {
		how := hs.shutdown
		hs.shutdown = 0
		_ = s.drv.Shutdown(hs.h, how)
	}
}

// closeHandle closes hs for the host: later operations on it fail at once.
// With writes queued, the operations pending on it other than the writes
// fail with net.ErrClosed now and the handle lingers until the queue
// drains.
func (s *driverSession) closeHandle(hs *hstate) {
	if hs.closing {
		return
	}
	hs.closing = true
	if len(hs.wq) == 0 {
		s.finishClose(hs)
		return
	}
	hs.deadline = time.Now().Add(lingerLimit)
	s.lingering++
	for id, p := range s.ops {
		if p.wh == hs.wh {
			p.drop()
			delete(s.ops, id)
			s.fail(id, net.ErrClosed)
		}
	}
}

// finishClose closes the driver's handle and forgets it.
func (s *driverSession) finishClose(hs *hstate) {
	if hs.wpop != nil {
		hs.wpop.drop()
		hs.wpop = nil
	}
	if !hs.deadline.IsZero() {
		s.lingering--
		hs.deadline = time.Time{}
	}
	for _, w := range hs.wq {
		s.fail(w.id, net.ErrClosed)
	}
	hs.wq = nil
	delete(s.handles, hs.wh)
	_ = s.drv.CloseHandle(hs.h)
}

// expireLingering closes the lingering handles whose time is up.
func (s *driverSession) expireLingering(now time.Time) {
	for _, hs := range s.handles {
		if hs.closing && !hs.deadline.IsZero() && now.After(hs.deadline) {
			s.finishClose(hs)
		}
	}
}

func (s *driverSession) finish(p *pop) {
	p.done = true
	p.buf = p.buf[:cap(p.buf)]
	delete(s.ops, p.id)
}

// drop cancels a pending operation.
func (p *pop) drop() {
	p.done = true
	switch {
	case p.fInt != nil:
		core.Drop(p.fInt)
	case p.fDg != nil:
		core.Drop(p.fDg)
	case p.fAcc != nil:
		core.Drop(p.fAcc)
	case p.fConn != nil:
		core.Drop(p.fConn)
	}
}
