package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	gonet "net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wfs"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"
)

// Driver runs the driver conformance suite: sockets (TCP, UDP, Unix),
// streams, files and cancellation, end to end through packages net, io
// and fs on runtimes built by configure, which selects the driver and the
// scheduler (and a timer, for the behaviours about deadlines; they are
// skipped without one), e.g.
//
//	conformance.Driver(t, func(b *rt.Builder) {
//		b.Scheduler("currentthread").Driver("epoll").Timer("wheel")
//	})
//
// Every behaviour builds its own runtime and uses loopback addresses and
// temporary files only. Verdicts never depend on timing; a hang fails the
// behaviour after the watchdog's limit. The descriptor-leak behaviour
// counts /proc/self/fd and is skipped where that does not exist.
func Driver(t *testing.T, configure func(*rt.Builder)) {
	for _, b := range driverSuite {
		t.Run(b.name, func(t *testing.T) { b.run(t, configure) })
	}
}

// DriverBehaviours returns the names of the behaviours Driver checks, in
// order.
func DriverBehaviours() []string {
	var names []string
	for _, b := range driverSuite {
		names = append(names, b.name)
	}
	return names
}

type driverBehaviour struct {
	name string
	run  func(t *testing.T, configure func(*rt.Builder))
}

// driverCase adapts a behaviour written as one task body.
func driverCase(body func(c *driverCtx) error) func(*testing.T, func(*rt.Builder)) {
	return func(t *testing.T, configure func(*rt.Builder)) {
		driverRun(t, driverRuntime(t, configure), body)
	}
}

var driverSuite = []driverBehaviour{
	{"AcceptedAndDialedStreamsSeeEachOthersAddresses", driverCase(testDriverAddresses)},
	{"BytesWrittenAtOneEndAreReadAtTheOtherInBothDirections", driverCase(testDriverBothDirections)},
	{"AReadReturnsWhatHasArrivedWithoutWaitingToFillItsBuffer", driverCase(testDriverPartialRead)},
	{"ALargeTransferThroughSmallBuffersArrivesWholeAndInOrder", driverCase(testDriverLargeTransfer)},
	{"PeerCloseIsReadAsEOFAfterTheLastByte", driverCase(testDriverPeerClose)},
	{"HalfCloseEndsOneDirectionAndTheOtherKeepsWorking", driverCase(testDriverHalfClose)},
	{"CloseReadMakesLaterReadsReturnEOF", driverCase(testDriverCloseRead)},
	{"AResetConnectionFailsReadsWithECONNRESET", driverCase(testDriverReset)},
	{"WritingToAClosedPeerFailsWithEPIPEOrECONNRESET", driverCase(testDriverWriteToClosedPeer)},
	{"ConnectingToAPortNobodyListensOnFailsWithECONNREFUSED", driverCase(testDriverRefused)},
	{"ListeningOnAnAddressInUseFailsWithEADDRINUSE", driverCase(testDriverAddrInUse)},
	{"ReusePortLetsTwoListenersShareAPort", driverCase(testDriverReusePort)},
	{"AReadAndAWriteInFlightOnOneStreamBothProgress", driverCase(testDriverFullDuplex)},
	{"SeveralPendingReadsOnOneStreamAllComplete", driverCase(testDriverManyReaders)},
	{"ConnReadersInSeveralTasksGetEachByteOfOneStreamExactlyOnce", concurrentCase(false, testConcurrentConnReaders)},
	{"CopiesInSeveralTasksFromOneStreamGetEachByteExactlyOnce", concurrentCase(false, testConcurrentCopies)},
	{"ConnWritersInSeveralTasksEachSendEveryWriteContiguously", concurrentCase(false, testConcurrentConnWriters)},
	{"RacyConnReadsOnOneStreamEitherCompleteOrTimeOut", concurrentCase(true, testRacyConnReads)},
	{"RacyConnWritesOnOneStreamEitherCompleteOrTimeOut", concurrentCase(true, testRacyConnWrites)},
	{"SeveralPendingAcceptsOnOneListenerEachGetAConnection", driverCase(testDriverManyAccepts)},
	{"DroppingAPendingReadCancelsItAndLeavesTheStreamUsable", driverCase(testDriverDropRead)},
	{"ATimeoutOnAPendingReadFailsWithDeadlineExceeded", driverCase(testDriverReadTimeout)},
	{"AReadDroppedOrTimedOutAtAnyMomentLosesNoByte", driverCase(testDriverAbandonedReadsLoseNoByte)},
	{"AConnReadAbortedByItsDeadlineLosesNoByte", driverCase(testDriverConnReadDeadlinesLoseNoByte)},
	{"AWriteStoppedByATimeoutReportsTheBytesItWrote", driverCase(testDriverTimedOutWritesReportWhatTheyWrote)},
	{"AConnWriteAbortedByItsDeadlineReportsTheBytesItWrote", driverCase(testDriverConnWriteDeadlinesReportWhatTheyWrote)},
	{"DialWithATimeoutConnectsToAListeningPeer", driverCase(testDriverDialTimeout)},
	{"ClosingAStreamFailsItsPendingReadAndWriteWithErrClosed", driverCase(testDriverClosePending)},
	{"ClosingAListenerFailsItsPendingAcceptWithErrClosed", driverCase(testDriverCloseListener)},
	{"OperationsOnAClosedStreamFailWithErrClosed", driverCase(testDriverUseAfterClose)},
	{"VectoredWriteSendsTheBuffersInOrder", driverCase(testDriverWritev)},
	{"SocketOptionsCanBeSet", driverCase(testDriverOptions)},
	{"UDPDatagramsKeepTheirBoundariesAndReportTheirSender", driverCase(testDriverUDPBoundaries)},
	{"ATruncatedDatagramDoesNotSpillIntoTheNext", driverCase(testDriverUDPTruncation)},
	{"ConnectedUDPSocketsSendAndRecv", driverCase(testDriverUDPConnected)},
	{"UnixStreamSocketsCarryBytesAndTheListenerRemovesItsFile", driverCase(testDriverUnixStream)},
	{"UnixDatagramsKeepTheirBoundaries", driverCase(testDriverUnixgram)},
	{"CopyBidirectionalProxiesUntilBothSidesClose", driverCase(testDriverProxy)},
	{"FilesRoundTripThroughWriteReadAtSyncAndStat", driverCase(testDriverFiles)},
	{"ReadFileAndWriteFileRoundTrip", driverCase(testDriverWholeFiles)},
	{"OpeningAMissingFileFailsWithErrNotExist", driverCase(testDriverMissingFile)},
	{"ClosingConnectionsWithPendingOperationsLeaksNoDescriptor", testDriverNoLeak},
}

// ---------------------------------------------------------------------------
// The suite's harness: behaviours are written as straight-line task bodies
// that await futures. Each body runs as a coroutine (iter.Pull) inside a
// real task, so every future is polled on a runtime worker with the task's
// own Context and waker, exactly as hand-written poll code would be.

// driverCtx is a running task body's handle on its task.
type driverCtx struct {
	t     *testing.T
	cx    *core.Context
	yield func(struct{}) bool
}

// errDriverAbandoned unwinds a body whose task was dropped while it
// awaited.
var errDriverAbandoned = errors.New("conformance: task dropped while awaiting")

// driverCo is the future of a task body.
type driverCo struct {
	c    *driverCtx
	next func() (struct{}, bool)
	stop func()
	err  error
}

// driverTask returns a future that runs body as a coroutine and resolves to
// its error.
func driverTask(t *testing.T, body func(c *driverCtx) error) core.Future[error] {
	f := &driverCo{c: &driverCtx{t: t}}
	f.next, f.stop = iter.Pull(func(yield func(struct{}) bool) {
		f.c.yield = yield
		defer func() {
			if r := recover(); r != nil && r != errDriverAbandoned {
				panic(r)
			}
		}()
		f.err = body(f.c)
	})
	return f
}

func (f *driverCo) Poll(cx *core.Context) (error, bool) {
	f.c.cx = cx
	if _, more := f.next(); more {
		return nil, false
	}
	return f.err, true
}

func (f *driverCo) Drop() { f.stop() }

// driverAwait polls fut on the body's task until it is ready, suspending
// the body while it is pending.
func driverAwait[T any](c *driverCtx, fut core.Future[T]) T {
	for {
		if v, ok := fut.Poll(c.cx); ok {
			return v
		}
		if !c.yield(struct{}{}) {
			core.Drop(fut)
			panic(errDriverAbandoned)
		}
	}
}

// driverAwaitR awaits a future of a core.Result and unpacks it.
func driverAwaitR[T any](c *driverCtx, fut core.Future[core.Result[T]]) (T, error) {
	return driverAwait(c, fut).Unwrap()
}

// driverPollOnce polls fut once and reports whether it was ready; the
// task's waker stays registered if it was not.
func driverPollOnce[T any](c *driverCtx, fut core.Future[T]) (T, bool) {
	return fut.Poll(c.cx)
}

// spawn starts body as another task and returns its handle.
func (c *driverCtx) spawn(body func(c *driverCtx) error) *core.JoinHandle[error] {
	return core.Spawn(c.cx, driverTask(c.t, body))
}

// join awaits a task started with spawn and returns its body's error.
func (c *driverCtx) join(h *core.JoinHandle[error]) error {
	r := driverAwait(c, h)
	if r.Err != nil {
		return r.Err
	}
	return r.Value
}

// driverRuntime builds the runtime under test, ignoring the environment.
func driverRuntime(t *testing.T, configure func(*rt.Builder)) *rt.Runtime {
	t.Helper()
	b := rt.NewBuilder().IgnoreEnv()
	configure(b)
	r, err := b.Build()
	require.NoError(t, err, "building the runtime")
	t.Cleanup(r.ShutdownBackground)
	return r
}

// errDriverNoTimer is returned by a body that needs the runtime's timer
// when it has none; driverRun skips the behaviour. (A body runs in a
// coroutine, where t.Skip must not be called.)
var errDriverNoTimer = errors.New("the runtime has no timer; configure one to check deadlines")

// driverRun runs body as the root task under the watchdog and fails the
// test with its error. Bodies report failures as errors rather than with
// t.Fatal, which must not run in a coroutine.
func driverRun(t *testing.T, r *rt.Runtime, body func(c *driverCtx) error) {
	t.Helper()
	err, jerr := blockOn(t, r, driverTask(t, body))
	require.NoError(t, jerr, "the root task failed")
	if errors.Is(err, errDriverNoTimer) {
		t.Skip(err)
	}
	require.NoError(t, err)
}

// driverCheck turns a failed expectation into an error.
func driverCheck(ok bool, format string, args ...any) error {
	if ok {
		return nil
	}
	return fmt.Errorf(format, args...)
}

// driverIs checks errors.Is(err, target) for each target, any of which
// may match.
func driverIs(what string, err error, targets ...error) error {
	for _, target := range targets {
		if errors.Is(err, target) {
			return nil
		}
	}
	return fmt.Errorf("%s: got error %v (%T), want one matching %v", what, err, err, targets)
}

// driverListen binds a TCP listener on a free loopback port.
func driverListen(c *driverCtx) (*wnet.TCPListener, error) {
	return wnet.ListenTCP(c.cx, "tcp", "127.0.0.1:0")
}

// driverPair returns the two ends of a fresh loopback TCP connection and
// its listener. The kernel completes the handshake from the listen queue,
// so dialling first and accepting second needs no second task.
func driverPair(c *driverCtx) (client, server *wnet.TCPStream, ln *wnet.TCPListener, err error) {
	ln, err = driverListen(c)
	if err != nil {
		return nil, nil, nil, err
	}
	client, err = driverAwaitR(c, wnet.DialTCP("tcp", ln.Addr().String()))
	if err != nil {
		return nil, nil, nil, err
	}
	server, err = driverAwaitR(c, ln.Accept())
	if err != nil {
		return nil, nil, nil, err
	}
	return client, server, ln, nil
}

// driverClose closes everything, ignoring errors.
func driverClose(cs ...interface{ Close() error }) {
	for _, x := range cs {
		if x != nil {
			_ = x.Close()
		}
	}
}

// driverPattern is n bytes of a pattern that shows reordering and loss.
func driverPattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i>>8 + i>>16)
	}
	return p
}

// driverSend writes all of p.
func driverSend(c *driverCtx, w wio.Writer, p []byte) error {
	_, err := driverAwaitR(c, wio.WriteAll(w, p))
	return err
}

// driverExpect reads exactly len(want) bytes and compares them.
func driverExpect(c *driverCtx, r wio.Reader, want []byte) error {
	got := make([]byte, len(want))
	if _, err := driverAwaitR(c, wio.ReadFull(r, got)); err != nil {
		return err
	}
	return driverCheck(bytes.Equal(got, want), "read %q, want %q", got, want)
}

// driverWakeCounter counts wakes of a waker.
type driverWakeCounter struct{ n atomic.Int64 }

func (w *driverWakeCounter) Wake() { w.n.Add(1) }

// ---------------------------------------------------------------------------
// TCP streams.

func testDriverAddresses(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	la, ok := ln.Addr().(*gonet.TCPAddr)
	if err := driverCheck(ok && la.Port != 0, "listener address %v is not a bound TCP address", ln.Addr()); err != nil {
		return err
	}
	if err := driverCheck(client.RemoteAddr().String() == ln.Addr().String(),
		"client's peer %v is not the listener %v", client.RemoteAddr(), ln.Addr()); err != nil {
		return err
	}
	if err := driverCheck(server.RemoteAddr().String() == client.LocalAddr().String(),
		"server's peer %v is not the client's local address %v", server.RemoteAddr(), client.LocalAddr()); err != nil {
		return err
	}
	return driverCheck(server.LocalAddr().String() == client.RemoteAddr().String(),
		"server's local address %v is not the client's peer %v", server.LocalAddr(), client.RemoteAddr())
}

func testDriverBothDirections(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	if err := driverSend(c, client, []byte("ping")); err != nil {
		return err
	}
	if err := driverExpect(c, server, []byte("ping")); err != nil {
		return err
	}
	if err := driverSend(c, server, []byte("pong!")); err != nil {
		return err
	}
	return driverExpect(c, client, []byte("pong!"))
}

func testDriverPartialRead(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	msg := []byte("ten bytes!")
	if err := driverSend(c, client, msg); err != nil {
		return err
	}
	buf := make([]byte, 1024)
	n, err := driverAwaitR(c, server.Read(buf))
	if err != nil {
		return err
	}
	if err := driverCheck(n >= 1 && n <= len(msg), "read %d bytes of %d written", n, len(msg)); err != nil {
		return err
	}
	if err := driverExpect(c, server, msg[n:]); err != nil {
		return err
	}
	return driverCheck(bytes.Equal(buf[:n], msg[:n]), "read %q, want a prefix of %q", buf[:n], msg)
}

func testDriverLargeTransfer(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	// Socket buffers much smaller than the transfer make the kernel split
	// it into many short writes and reads. (Not smaller than a loopback
	// segment, about 64 KiB: a receive buffer that cannot hold one makes
	// TCP stall on its persist timer.)
	if err := client.SetWriteBuffer(128 << 10); err != nil {
		return err
	}
	if err := server.SetReadBuffer(128 << 10); err != nil {
		return err
	}
	data := driverPattern(8 << 20)
	var writes, short atomic.Int64
	writer := c.spawn(func(c *driverCtx) error {
		for off := 0; off < len(data); {
			n, err := driverAwaitR(c, client.Write(data[off:]))
			if err != nil {
				return err
			}
			if n < 1 || n > len(data)-off {
				return fmt.Errorf("a write of %d bytes resolved to %d", len(data)-off, n)
			}
			writes.Add(1)
			if n < len(data)-off {
				short.Add(1)
			}
			off += n
		}
		return client.CloseWrite()
	})
	got := make([]byte, 0, len(data))
	buf := make([]byte, 1500)
	for i := 0; ; i++ {
		// Vary the read size so reads end at every kind of boundary.
		n, err := driverAwaitR(c, server.Read(buf[:1+i*37%len(buf)]))
		got = append(got, buf[:n]...)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
	}
	if err := c.join(writer); err != nil {
		return err
	}
	if err := driverCheck(len(got) == len(data), "received %d bytes of %d", len(got), len(data)); err != nil {
		return err
	}
	c.t.Logf("%d writes, %d of them short", writes.Load(), short.Load())
	return driverCheck(bytes.Equal(got, data), "the bytes arrived corrupted or out of order")
}

func testDriverPeerClose(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, ln)
	if err := driverSend(c, server, []byte("bye")); err != nil {
		return err
	}
	if err := server.Close(); err != nil {
		return err
	}
	if err := driverExpect(c, client, []byte("bye")); err != nil {
		return err
	}
	buf := make([]byte, 16)
	for range 2 {
		n, err := driverAwaitR(c, client.Read(buf))
		if err := driverIs("read after the peer closed", err, io.EOF); err != nil {
			return err
		}
		if err := driverCheck(n == 0, "EOF with %d bytes", n); err != nil {
			return err
		}
	}
	return nil
}

func testDriverHalfClose(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	if err := driverSend(c, client, []byte("request")); err != nil {
		return err
	}
	if err := client.CloseWrite(); err != nil {
		return err
	}
	got, err := driverAwaitR(c, wio.ReadAll(server))
	if err != nil {
		return err
	}
	if err := driverCheck(string(got) == "request", "server read %q before EOF", got); err != nil {
		return err
	}
	if err := driverSend(c, server, []byte("response")); err != nil {
		return err
	}
	if err := server.CloseWrite(); err != nil {
		return err
	}
	got, err = driverAwaitR(c, wio.ReadAll(client))
	if err != nil {
		return err
	}
	return driverCheck(string(got) == "response", "client read %q after its half close", got)
}

func testDriverCloseRead(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	if err := client.CloseRead(); err != nil {
		return err
	}
	_, err = driverAwaitR(c, client.Read(make([]byte, 8)))
	if err := driverIs("read after CloseRead", err, io.EOF); err != nil {
		return err
	}
	// The other direction still works.
	if err := driverSend(c, client, []byte("still")); err != nil {
		return err
	}
	return driverExpect(c, server, []byte("still"))
}

func testDriverReset(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, ln)
	if err := server.SetLinger(0); err != nil {
		return err
	}
	if err := server.Close(); err != nil {
		return err
	}
	_, err = driverAwaitR(c, client.Read(make([]byte, 8)))
	return driverIs("read from a reset connection", err, syscall.ECONNRESET)
}

func testDriverWriteToClosedPeer(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, ln)
	if err := server.Close(); err != nil {
		return err
	}
	// The FIN arrives first; the first write then draws a reset, and a
	// write after the reset fails.
	if _, err := driverAwaitR(c, client.Read(make([]byte, 8))); !errors.Is(err, io.EOF) {
		return fmt.Errorf("read after the peer closed: %v, want io.EOF", err)
	}
	for range 100_000 {
		if _, err = driverAwaitR(c, client.Write([]byte("x"))); err != nil {
			return driverIs("write to a closed peer", err, syscall.EPIPE, syscall.ECONNRESET)
		}
		driverAwait(c, core.Yield())
	}
	return errors.New("writes to a closed peer kept succeeding")
}

func testDriverRefused(c *driverCtx) error {
	ln, err := driverListen(c)
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		return err
	}
	s, err := driverAwaitR(c, wnet.DialTCP("tcp", addr))
	if err == nil {
		s.Close()
		return fmt.Errorf("dial to %s, where nobody listens, succeeded", addr)
	}
	var op *gonet.OpError
	if err := driverCheck(errors.As(err, &op) && op.Op == "dial", "dial error %v is not a *net.OpError of op dial", err); err != nil {
		return err
	}
	return driverIs("dial to a closed port", err, syscall.ECONNREFUSED)
}

func testDriverAddrInUse(c *driverCtx) error {
	ln, err := driverListen(c)
	if err != nil {
		return err
	}
	defer ln.Close()
	ln2, err := wnet.ListenTCP(c.cx, "tcp", ln.Addr().String())
	if err == nil {
		ln2.Close()
		return errors.New("a second listener on the same address succeeded")
	}
	return driverIs("listen on a used address", err, syscall.EADDRINUSE)
}

func testDriverReusePort(c *driverCtx) error {
	lc := wnet.ListenConfig{ReuseAddr: true, ReusePort: true}
	a, err := lc.ListenTCP(c.cx, "tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := lc.ListenTCP(c.cx, "tcp", a.Addr().String())
	if err != nil {
		return fmt.Errorf("second SO_REUSEPORT listener: %w", err)
	}
	defer b.Close()
	return driverCheck(a.Addr().String() == b.Addr().String(), "listeners on %v and %v", a.Addr(), b.Addr())
}

func testDriverFullDuplex(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	for _, s := range []*wnet.TCPStream{client, server} {
		if err := s.SetWriteBuffer(128 << 10); err != nil {
			return err
		}
		if err := s.SetReadBuffer(128 << 10); err != nil {
			return err
		}
	}
	// Each end writes 4 MiB, far more than the buffers between them hold,
	// while the other end's reader runs in its own task; a stream that
	// could not have a read and a write in flight at once would deadlock.
	data := driverPattern(4 << 20)
	var hs []*core.JoinHandle[error]
	for _, pair := range [][2]*wnet.TCPStream{{client, server}, {server, client}} {
		w, r := pair[0], pair[1]
		hs = append(hs, c.spawn(func(c *driverCtx) error { return driverSend(c, w, data) }))
		hs = append(hs, c.spawn(func(c *driverCtx) error { return driverExpect(c, r, data) }))
	}
	for _, h := range hs {
		if err := c.join(h); err != nil {
			return err
		}
	}
	return nil
}

func testDriverManyReaders(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	const readers, each = 4, 16
	got := make([][]byte, readers)
	var hs []*core.JoinHandle[error]
	for i := range readers {
		hs = append(hs, c.spawn(func(c *driverCtx) error {
			got[i] = make([]byte, each)
			_, err := driverAwaitR(c, wio.ReadFull(server, got[i]))
			return err
		}))
	}
	// Let every reader register before the bytes arrive.
	for range 4 {
		driverAwait(c, core.Yield())
	}
	data := make([]byte, readers*each)
	for i := range data {
		data[i] = byte(i)
	}
	if err := driverSend(c, client, data); err != nil {
		return err
	}
	for _, h := range hs {
		if err := c.join(h); err != nil {
			return err
		}
	}
	all := slices.Concat(got...)
	slices.Sort(all)
	return driverCheck(bytes.Equal(all, data), "the readers received %v between them, want each byte of %v once", all, data)
}

func testDriverManyAccepts(c *driverCtx) error {
	ln, err := driverListen(c)
	if err != nil {
		return err
	}
	defer ln.Close()
	const n = 4
	var hs []*core.JoinHandle[error]
	for range n {
		hs = append(hs, c.spawn(func(c *driverCtx) error {
			s, err := driverAwaitR(c, ln.Accept())
			if err != nil {
				return err
			}
			defer s.Close()
			return driverSend(c, s, []byte("hi"))
		}))
	}
	for range n {
		s, err := driverAwaitR(c, wnet.DialTCP("tcp", ln.Addr().String()))
		if err != nil {
			return err
		}
		err = driverExpect(c, s, []byte("hi"))
		s.Close()
		if err != nil {
			return err
		}
	}
	for _, h := range hs {
		if err := c.join(h); err != nil {
			return err
		}
	}
	return nil
}

func testDriverDropRead(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	// Poll a read once with a counting waker, so it registers for
	// readiness, then drop it.
	counter := &driverWakeCounter{}
	sub := c.cx.WithWaker(counter)
	buf := make([]byte, 8)
	dropped := server.Read(buf)
	if _, ok := dropped.Poll(&sub); ok {
		return errors.New("a read with no data resolved at once")
	}
	core.Drop(dropped)
	if err := driverSend(c, client, []byte("after")); err != nil {
		return err
	}
	// A new read gets the bytes: the dropped one took nothing.
	if err := driverExpect(c, server, []byte("after")); err != nil {
		return err
	}
	// The event that completed the new read would have woken the
	// dropped one too, had it still been registered.
	return driverCheck(counter.n.Load() == 0, "the dropped read's waker was woken %d times", counter.n.Load())
}

func testDriverReadTimeout(c *driverCtx) error {
	if w := c.cx.Worker(); w.Time() == nil || w.Time().Timer == nil {
		return errDriverNoTimer
	}
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	_, err = driverAwaitR(c, wio.Timeout(server.Read(make([]byte, 8)), 20*time.Millisecond))
	if err := driverIs("a read with nothing to read past its deadline", err, os.ErrDeadlineExceeded); err != nil {
		return err
	}
	var timeout interface{ Timeout() bool }
	if err := driverCheck(errors.As(err, &timeout) && timeout.Timeout(), "%v does not report Timeout() true", err); err != nil {
		return err
	}
	// The timed-out read was dropped; the stream still works.
	if err := driverSend(c, client, []byte("late")); err != nil {
		return err
	}
	return driverExpect(c, server, []byte("late"))
}

func testDriverDialTimeout(c *driverCtx) error {
	if w := c.cx.Worker(); w.Time() == nil || w.Time().Timer == nil {
		return errDriverNoTimer
	}
	ln, err := driverListen(c)
	if err != nil {
		return err
	}
	defer ln.Close()
	s, err := driverAwaitR(c, wnet.DialTCPTimeout("tcp", ln.Addr().String(), time.Minute))
	if err != nil {
		return err
	}
	defer s.Close()
	peer, err := driverAwaitR(c, ln.Accept())
	if err != nil {
		return err
	}
	defer peer.Close()
	if err := driverSend(c, s, []byte("ok")); err != nil {
		return err
	}
	return driverExpect(c, peer, []byte("ok"))
}

func testDriverClosePending(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, ln)
	if err := server.SetWriteBuffer(128 << 10); err != nil {
		return err
	}
	read := server.Read(make([]byte, 8))
	if _, ok := driverPollOnce(c, read); ok {
		return errors.New("a read with no data resolved at once")
	}
	// Fill the send buffer (the client reads nothing) until a write waits.
	big := make([]byte, 64<<10)
	var write core.Future[core.Result[int]]
	for range 10_000 {
		write = server.Write(big)
		if _, ok := driverPollOnce(c, write); !ok {
			break
		}
		write = nil
	}
	if write == nil {
		return errors.New("writes never waited for a full send buffer")
	}
	if err := server.Close(); err != nil {
		return err
	}
	_, err = driverAwaitR(c, read)
	if err := driverIs("a read pending when its stream closed", err, gonet.ErrClosed); err != nil {
		return err
	}
	_, err = driverAwaitR(c, write)
	return driverIs("a write pending when its stream closed", err, gonet.ErrClosed)
}

func testDriverCloseListener(c *driverCtx) error {
	ln, err := driverListen(c)
	if err != nil {
		return err
	}
	accept := ln.Accept()
	if _, ok := driverPollOnce(c, accept); ok {
		return errors.New("an accept with no connection resolved at once")
	}
	if err := ln.Close(); err != nil {
		return err
	}
	_, err = driverAwaitR(c, accept)
	return driverIs("an accept pending when its listener closed", err, gonet.ErrClosed)
}

func testDriverUseAfterClose(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(server)
	if err := client.Close(); err != nil {
		return err
	}
	_, err = driverAwaitR(c, client.Read(make([]byte, 8)))
	if err := driverIs("read after Close", err, gonet.ErrClosed); err != nil {
		return err
	}
	_, err = driverAwaitR(c, client.Write([]byte("x")))
	if err := driverIs("write after Close", err, gonet.ErrClosed); err != nil {
		return err
	}
	if err := driverIs("a second Close", client.Close(), gonet.ErrClosed); err != nil {
		return err
	}
	if err := ln.Close(); err != nil {
		return err
	}
	return driverIs("a second listener Close", ln.Close(), gonet.ErrClosed)
}

func testDriverWritev(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	bufs := [][]byte{[]byte("one,"), nil, []byte("two,"), []byte("three")}
	want := bytes.Join(bufs, nil)
	sent := 0
	for sent < len(want) {
		// Write what is left, as buffers, until everything went.
		var rest [][]byte
		skip := sent
		for _, b := range bufs {
			if skip >= len(b) {
				skip -= len(b)
				continue
			}
			rest = append(rest, b[skip:])
			skip = 0
		}
		n, err := driverAwaitR(c, client.WriteVectored(rest))
		if err != nil {
			return err
		}
		sent += n
	}
	return driverExpect(c, server, want)
}

func testDriverOptions(c *driverCtx) error {
	client, server, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	for name, err := range map[string]error{
		"SetNoDelay(false)":       client.SetNoDelay(false),
		"SetNoDelay(true)":        client.SetNoDelay(true),
		"SetKeepAlive(true)":      client.SetKeepAlive(true),
		"SetKeepAlivePeriod(15s)": client.SetKeepAlivePeriod(15 * time.Second),
		"SetLinger(5)":            client.SetLinger(5),
		"SetLinger(-1)":           client.SetLinger(-1),
		"SetReadBuffer(64K)":      client.SetReadBuffer(64 << 10),
		"SetWriteBuffer(64K)":     client.SetWriteBuffer(64 << 10),
	} {
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	// The stream still carries bytes.
	if err := driverSend(c, client, []byte("opts")); err != nil {
		return err
	}
	return driverExpect(c, server, []byte("opts"))
}

// ---------------------------------------------------------------------------
// Datagrams and Unix sockets.

func testDriverUDPBoundaries(c *driverCtx) error {
	a, err := wnet.BindUDP(c.cx, "udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := wnet.BindUDP(c.cx, "udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer b.Close()
	msgs := [][]byte{[]byte("a"), driverPattern(100), driverPattern(1200)}
	for _, m := range msgs {
		n, err := driverAwaitR(c, a.SendTo(m, b.LocalAddr().String()))
		if err != nil {
			return err
		}
		if err := driverCheck(n == len(m), "SendTo of %d bytes resolved to %d", len(m), n); err != nil {
			return err
		}
	}
	buf := make([]byte, 4096)
	for _, m := range msgs {
		d, err := driverAwaitR(c, b.RecvFrom(buf))
		if err != nil {
			return err
		}
		if err := driverCheck(bytes.Equal(buf[:d.N], m), "received a datagram of %d bytes, want %d", d.N, len(m)); err != nil {
			return err
		}
		if err := driverCheck(d.From != nil && d.From.String() == a.LocalAddr().String(),
			"sender %v, want %v", d.From, a.LocalAddr()); err != nil {
			return err
		}
	}
	return nil
}

func testDriverUDPTruncation(c *driverCtx) error {
	a, err := wnet.BindUDP(c.cx, "udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := wnet.BindUDP(c.cx, "udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer b.Close()
	to := b.LocalAddr().String()
	if _, err := driverAwaitR(c, a.SendTo(driverPattern(100), to)); err != nil {
		return err
	}
	if _, err := driverAwaitR(c, a.SendTo([]byte("next"), to)); err != nil {
		return err
	}
	small := make([]byte, 10)
	d, err := driverAwaitR(c, b.RecvFrom(small))
	if err != nil {
		return err
	}
	if err := driverCheck(d.N == 10 && bytes.Equal(small, driverPattern(10)), "truncated datagram: %d bytes %v", d.N, small[:d.N]); err != nil {
		return err
	}
	buf := make([]byte, 100)
	d, err = driverAwaitR(c, b.RecvFrom(buf))
	if err != nil {
		return err
	}
	return driverCheck(string(buf[:d.N]) == "next", "the datagram after a truncated one read %q", buf[:d.N])
}

func testDriverUDPConnected(c *driverCtx) error {
	a, err := wnet.BindUDP(c.cx, "udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := wnet.BindUDP(c.cx, "udp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer b.Close()
	if err := a.Connect(b.LocalAddr().String()); err != nil {
		return err
	}
	if err := b.Connect(a.LocalAddr().String()); err != nil {
		return err
	}
	if err := driverCheck(a.RemoteAddr() != nil && a.RemoteAddr().String() == b.LocalAddr().String(),
		"connected peer %v, want %v", a.RemoteAddr(), b.LocalAddr()); err != nil {
		return err
	}
	for _, m := range []string{"hello", "", "world"} {
		if _, err := driverAwaitR(c, a.Send([]byte(m))); err != nil {
			return err
		}
	}
	buf := make([]byte, 64)
	for _, m := range []string{"hello", "", "world"} {
		n, err := driverAwaitR(c, b.Recv(buf))
		if err != nil {
			return fmt.Errorf("receiving %q: %w", m, err)
		}
		if err := driverCheck(string(buf[:n]) == m, "received %q, want %q", buf[:n], m); err != nil {
			return err
		}
	}
	return nil
}

func testDriverUnixStream(c *driverCtx) error {
	path := filepath.Join(c.t.TempDir(), "s.sock")
	ln, err := wnet.ListenUnix(c.cx, path)
	if err != nil {
		return err
	}
	client, err := driverAwaitR(c, wnet.DialUnix(path))
	if err != nil {
		ln.Close()
		return err
	}
	defer client.Close()
	server, err := driverAwaitR(c, ln.Accept())
	if err != nil {
		ln.Close()
		return err
	}
	defer server.Close()
	if err := driverSend(c, client, []byte("over unix")); err != nil {
		return err
	}
	if err := driverExpect(c, server, []byte("over unix")); err != nil {
		return err
	}
	if err := client.CloseWrite(); err != nil {
		return err
	}
	if _, err := driverAwaitR(c, server.Read(make([]byte, 4))); !errors.Is(err, io.EOF) {
		return fmt.Errorf("read after the peer's half close: %v, want io.EOF", err)
	}
	if err := ln.Close(); err != nil {
		return err
	}
	_, err = os.Stat(path)
	return driverCheck(errors.Is(err, os.ErrNotExist), "the socket file is still there after Close (stat: %v)", err)
}

func testDriverUnixgram(c *driverCtx) error {
	dir := c.t.TempDir()
	pa, pb := filepath.Join(dir, "a.sock"), filepath.Join(dir, "b.sock")
	a, err := wnet.BindUnixgram(c.cx, pa)
	if err != nil {
		return err
	}
	defer a.Close()
	b, err := wnet.BindUnixgram(c.cx, pb)
	if err != nil {
		return err
	}
	defer b.Close()
	msgs := [][]byte{[]byte("x"), driverPattern(3000)}
	for _, m := range msgs {
		if _, err := driverAwaitR(c, a.SendTo(m, pb)); err != nil {
			return err
		}
	}
	buf := make([]byte, 8192)
	for _, m := range msgs {
		d, err := driverAwaitR(c, b.RecvFrom(buf))
		if err != nil {
			return err
		}
		if err := driverCheck(bytes.Equal(buf[:d.N], m), "received %d bytes, want %d", d.N, len(m)); err != nil {
			return err
		}
		if err := driverCheck(d.From != nil && d.From.String() == pa, "sender %v, want %s", d.From, pa); err != nil {
			return err
		}
	}
	return nil
}

// ---------------------------------------------------------------------------
// Utilities over real sockets.

func testDriverProxy(c *driverCtx) error {
	// client <-> [front | proxy | back] <-> echo backend
	backend, err := driverListen(c)
	if err != nil {
		return err
	}
	defer backend.Close()
	echo := c.spawn(func(c *driverCtx) error {
		s, err := driverAwaitR(c, backend.Accept())
		if err != nil {
			return err
		}
		defer s.Close()
		if _, err := driverAwaitR(c, wio.Copy(s, s)); err != nil {
			return err
		}
		return s.CloseWrite()
	})
	client, front, ln, err := driverPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, front, ln)
	back, err := driverAwaitR(c, wnet.DialTCP("tcp", backend.Addr().String()))
	if err != nil {
		return err
	}
	defer back.Close()
	var moved wio.Transferred
	proxy := c.spawn(func(c *driverCtx) error {
		var err error
		moved, err = driverAwaitR(c, wio.CopyBidirectional(front, back))
		return err
	})
	data := driverPattern(200 << 10)
	sender := c.spawn(func(c *driverCtx) error {
		if err := driverSend(c, client, data); err != nil {
			return err
		}
		return client.CloseWrite()
	})
	got, err := driverAwaitR(c, wio.ReadAll(client))
	if err != nil {
		return err
	}
	for _, h := range []*core.JoinHandle[error]{sender, proxy, echo} {
		if err := c.join(h); err != nil {
			return err
		}
	}
	if err := driverCheck(bytes.Equal(got, data), "the echo through the proxy returned %d bytes of %d, or corrupted", len(got), len(data)); err != nil {
		return err
	}
	return driverCheck(moved.AToB == int64(len(data)) && moved.BToA == int64(len(data)),
		"the proxy reports %+v, want %d each way", moved, len(data))
}

// ---------------------------------------------------------------------------
// Files.

func testDriverFiles(c *driverCtx) error {
	path := filepath.Join(c.t.TempDir(), "f")
	f, err := driverAwaitR(c, wfs.Create(path))
	if err != nil {
		return err
	}
	if n, err := driverAwaitR(c, f.Write([]byte("hello, "))); err != nil || n != 7 {
		return fmt.Errorf("write: %d, %v", n, err)
	}
	if n, err := driverAwaitR(c, f.Write([]byte("world"))); err != nil || n != 5 {
		return fmt.Errorf("second write: %d, %v", n, err)
	}
	if n, err := driverAwaitR(c, f.WriteAt([]byte("W"), 7)); err != nil || n != 1 {
		return fmt.Errorf("write at: %d, %v", n, err)
	}
	if _, err := driverAwaitR(c, f.Sync()); err != nil {
		return err
	}
	fi, err := driverAwaitR(c, f.Stat())
	if err != nil {
		return err
	}
	if err := driverCheck(fi.Size() == 12, "size %d after writing 12 bytes", fi.Size()); err != nil {
		return err
	}
	buf := make([]byte, 5)
	if n, err := driverAwaitR(c, f.ReadAt(buf, 7)); err != nil || string(buf[:n]) != "World" {
		return fmt.Errorf("read at 7: %q, %v", buf[:n], err)
	}
	n, err := driverAwaitR(c, f.ReadAt(make([]byte, 10), 8))
	if err := driverIs("a ReadAt past the end", err, io.EOF); err != nil {
		return err
	}
	if err := driverCheck(n == 4, "a ReadAt of 10 at 8 of 12 read %d", n); err != nil {
		return err
	}
	if _, err := driverAwaitR(c, f.Close()); err != nil {
		return err
	}
	if _, err := driverAwaitR(c, f.Close()); !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("second Close: %v, want os.ErrClosed", err)
	}
	if _, err := driverAwaitR(c, f.Read(buf)); !errors.Is(err, os.ErrClosed) {
		return fmt.Errorf("read after Close: %v, want os.ErrClosed", err)
	}
	r, err := driverAwaitR(c, wfs.Open(path))
	if err != nil {
		return err
	}
	got, err := driverAwaitR(c, wio.ReadAll(r))
	if _, cerr := driverAwaitR(c, r.Close()); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return driverCheck(string(got) == "hello, World", "read back %q", got)
}

func testDriverWholeFiles(c *driverCtx) error {
	path := filepath.Join(c.t.TempDir(), "whole")
	data := driverPattern(300 << 10)
	if _, err := driverAwaitR(c, wfs.WriteFile(path, data, 0o600)); err != nil {
		return err
	}
	got, err := driverAwaitR(c, wfs.ReadFile(path))
	if err != nil {
		return err
	}
	if err := driverCheck(bytes.Equal(got, data), "ReadFile returned %d bytes of %d, or corrupted", len(got), len(data)); err != nil {
		return err
	}
	fi, err := driverAwaitR(c, wfs.Stat(path))
	if err != nil {
		return err
	}
	if err := driverCheck(fi.Size() == int64(len(data)) && fi.Mode().Perm() == 0o600, "stat: size %d mode %v", fi.Size(), fi.Mode()); err != nil {
		return err
	}
	if _, err := driverAwaitR(c, wfs.Remove(path)); err != nil {
		return err
	}
	_, err = driverAwaitR(c, wfs.Stat(path))
	return driverIs("stat after Remove", err, os.ErrNotExist)
}

func testDriverMissingFile(c *driverCtx) error {
	_, err := driverAwaitR(c, wfs.Open(filepath.Join(c.t.TempDir(), "missing")))
	if err := driverIs("opening a missing file", err, os.ErrNotExist, syscall.ENOENT); err != nil {
		return err
	}
	var pe *os.PathError
	return driverCheck(errors.As(err, &pe), "%v is not a *fs.PathError", err)
}

// ---------------------------------------------------------------------------
// Descriptors.

// driverOpenFDs lists the process's open descriptors (number -> what it
// refers to), or reports false where /proc/self/fd does not exist.
func driverOpenFDs() (map[string]string, bool) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, false
	}
	fds := make(map[string]string, len(ents))
	for _, e := range ents {
		target, _ := os.Readlink("/proc/self/fd/" + e.Name())
		fds[e.Name()] = target
	}
	return fds, true
}

// driverNewFDs lists the descriptors of after that are not in before: a
// number that was not open, or that now names something else. A leak shows
// up there. Descriptors of before that closed meanwhile do not count:
// the process may be finishing work of earlier tests (a plugin process's
// pipes, say), which is none of the runtime's business.
func driverNewFDs(before, after map[string]string) []string {
	var extra []string
	for fd, target := range after {
		if before[fd] != target {
			extra = append(extra, fd+" -> "+target)
		}
	}
	slices.Sort(extra)
	return extra
}

// driverLeftOpen returns the descriptors open now that were not in before,
// once they stop closing: it looks again, for up to two seconds, while some
// remain. A driver served by a plugin process talks to it over gRPC, whose
// goroutines may close a connection an instant after the driver's Close
// returned; a leaked descriptor stays open however long one waits.
func driverLeftOpen(before map[string]string) []string {
	deadline := time.Now().Add(2 * time.Second)
	for {
		after, _ := driverOpenFDs()
		extra := driverNewFDs(before, after)
		if len(extra) == 0 || time.Now().After(deadline) {
			return extra
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func testDriverNoLeak(t *testing.T, configure func(*rt.Builder)) {
	if runtime.GOOS != "linux" {
		t.Skip("counts descriptors in /proc/self/fd")
	}
	driverOpenFDs() // the first ReadDir may start Go's own poller
	before, _ := driverOpenFDs()
	r := driverRuntime(t, configure)
	driverRun(t, r, func(c *driverCtx) error {
		during, _ := driverOpenFDs()
		ln, err := driverListen(c)
		if err != nil {
			return err
		}
		for i := range 60 {
			client, server, err := driverAcceptDial(c, ln)
			if err != nil {
				return err
			}
			switch i % 4 {
			case 0: // an exchange, then closed from both ends
				if err := driverSend(c, client, []byte("x")); err != nil {
					return err
				}
				if err := driverExpect(c, server, []byte("x")); err != nil {
					return err
				}
				driverClose(client, server)
			case 1: // closed while a read is pending on it
				read := server.Read(make([]byte, 8))
				driverPollOnce(c, read)
				driverClose(server)
				driverAwait(c, read)
				driverClose(client)
			case 2: // a task parked in a read, aborted, then closed
				h := c.spawn(func(c *driverCtx) error {
					_, err := driverAwaitR(c, server.Read(make([]byte, 8)))
					return err
				})
				driverAwait(c, core.Yield())
				h.Abort()
				driverAwait(c, h)
				driverClose(client, server)
			case 3: // reset by the peer while the other end reads
				read := client.Read(make([]byte, 8))
				driverPollOnce(c, read)
				_ = server.SetLinger(0)
				driverClose(server)
				driverAwait(c, read)
				driverClose(client)
			}
		}
		// A connect dropped before it resolves closes its socket (the
		// connection the kernel may have queued dies with the listener).
		// On loopback the connect may also resolve at the first poll
		// (another worker's park saw it complete); the stream is then
		// ours to close.
		dial := wnet.DialTCP("tcp", ln.Addr().String())
		if r, ok := driverPollOnce(c, dial); !ok {
			core.Drop(dial)
		} else if r.Err == nil {
			r.Value.Close()
		}
		driverClose(ln)
		// An accept pending when its listener closes.
		ln2, err := driverListen(c)
		if err != nil {
			return err
		}
		accept := ln2.Accept()
		if _, ok := driverPollOnce(c, accept); ok {
			return errors.New("an accept nobody dialled resolved at once")
		}
		driverClose(ln2)
		driverAwait(c, accept)
		after, _ := driverOpenFDs()
		extra := driverNewFDs(during, after)
		return driverCheck(len(extra) == 0, "descriptors left open by 60 connections: %v", extra)
	})
	r.ShutdownBackground()
	assert.Empty(t, driverLeftOpen(before), "descriptors left open after the runtime shut down")
}

// driverAcceptDial connects to ln and accepts the connection.
func driverAcceptDial(c *driverCtx, ln *wnet.TCPListener) (client, server *wnet.TCPStream, err error) {
	client, err = driverAwaitR(c, wnet.DialTCP("tcp", ln.Addr().String()))
	if err != nil {
		return nil, nil, err
	}
	server, err = driverAwaitR(c, ln.Accept())
	if err != nil {
		client.Close()
		return nil, nil, err
	}
	return client, server, nil
}
