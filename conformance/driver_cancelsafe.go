package conformance

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
)

// Cancel safety. A read may be abandoned at any moment: dropped as the
// loser of a select, timed out by io.Timeout, aborted by a co.Conn read
// deadline that another task moves into the past. Whatever the driver had
// already taken from the socket for it belongs to the next read on the
// stream: no byte is lost, duplicated or reordered. A write stopped by a
// deadline (io.Timeout, co.Conn's write deadline) reports the bytes it
// wrote, so a writer that carries on from there sends every byte once.
//
// Each behaviour runs a byte-numbered stream (byte i is i mod 251, a prime,
// so no chunk or buffer boundary lines up with the numbering) between two
// tasks that hand off with yields, and checks every byte at the reader.
// Nothing depends on timing: the races are there or not on a given run,
// and the verdict is the same either way.

// csByte is byte i of a numbered stream.
func csByte(i int) byte { return byte(i % 251) }

// csSink checks that the bytes of a numbered stream arrive exactly once
// and in order.
type csSink struct{ next int }

func (s *csSink) take(p []byte) error {
	for j, b := range p {
		if want := csByte(s.next + j); b != want {
			return fmt.Errorf("byte %d of the stream is %d, want %d (a byte was lost, duplicated or reordered)", s.next+j, b, want)
		}
	}
	s.next += len(p)
	return nil
}

// csLongAgo is a deadline in the past, the value net/http uses to abort a
// pending read.
var csLongAgo = time.Unix(1, 0)

// csSend writes chunks small chunks of a numbered stream (1 to 40 bytes),
// yielding between them so the reader sees the stream arrive piece by
// piece, calls after(i) after chunk i, half-closes the stream and returns
// the number of bytes sent.
func csSend(c *driverCtx, w *wnet.TCPStream, chunks int, after func(i int)) (int, error) {
	buf := make([]byte, 40)
	rnd := uint32(7)
	off := 0
	for i := range chunks {
		rnd = rnd*1664525 + 1013904223
		n := 1 + int(rnd>>24)%len(buf)
		for j := range n {
			buf[j] = csByte(off + j)
		}
		if err := driverSend(c, w, buf[:n]); err != nil {
			return off, fmt.Errorf("writing chunk %d: %w", i, err)
		}
		off += n
		if after != nil {
			after(i)
		}
		driverAwait(c, core.Yield())
		if rnd&0x300 == 0 {
			driverAwait(c, core.Yield())
		}
	}
	return off, w.CloseWrite()
}

// csHasTimer reports whether the runtime has a timer.
func csHasTimer(c *driverCtx) bool {
	w := c.cx.Worker()
	return w.Time() != nil && w.Time().Timer != nil
}

func csIsDeadline(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }

// testDriverAbandonedReadsLoseNoByte reads a numbered stream to EOF with
// reads abandoned every way a future can be: a timeout of zero (the read
// is submitted, then dropped at once), timeouts of a few microseconds, a
// select lost to a yield (the read is dropped after the driver had a turn
// to complete it), a poll-style read cancelled after a yield, and plain
// reads in between.
func testDriverAbandonedReadsLoseNoByte(c *driverCtx) error {
	client, server, ln, err := csPair(c, false)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	var sent atomic.Int64
	sender := c.spawn(func(c *driverCtx) error {
		n, err := csSend(c, client, 3000, nil)
		sent.Store(int64(n))
		return err
	})
	var sink csSink
	buf := make([]byte, 64)
	for i := 0; ; i++ {
		p := buf[:1+i*13%len(buf)]
		var n int
		var err error
		switch i % 8 {
		case 0, 1, 2:
			n, err = driverAwaitR(c, wio.Timeout(server.Read(p), 0))
		case 3:
			d := time.Duration(1+i%40) * time.Microsecond
			n, err = driverAwaitR(c, wio.Timeout(server.Read(p), d))
		case 4:
			e := driverAwait(c, future.Select2(server.Read(p), core.Yield()))
			if e.Index == 1 {
				continue // the read lost and was dropped
			}
			n, err = e.First.Unwrap()
		case 5:
			var done bool
			n, err, done = server.PollRead(c.cx, p)
			if !done {
				driverAwait(c, core.Yield())
				if n, err, done = server.PollRead(c.cx, p); !done {
					server.CancelRead()
					continue
				}
			}
		default:
			n, err = driverAwaitR(c, server.Read(p))
		}
		if n < 0 || n > len(p) {
			return fmt.Errorf("a read of %d bytes resolved to %d", len(p), n)
		}
		if err := sink.take(p[:n]); err != nil {
			return err
		}
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			if err := c.join(sender); err != nil {
				return err
			}
			return driverCheck(int64(sink.next) == sent.Load(), "read %d bytes to EOF, %d were sent", sink.next, sent.Load())
		case csIsDeadline(err):
			if n != 0 {
				return fmt.Errorf("a read that timed out reported %d bytes", n)
			}
		default:
			return err
		}
	}
}

// testDriverConnReadDeadlinesLoseNoByte reads a numbered stream through
// co.Conn while the sending task aborts the pending read every few chunks
// by moving the read deadline into the past, as net/http does to end its
// background read, and the reader gives some reads a deadline of its own.
func testDriverConnReadDeadlinesLoseNoByte(c *driverCtx) error {
	client, server, ln, err := csPair(c, false)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	var conn atomic.Pointer[co.StreamConn]
	var sent atomic.Int64
	sender := c.spawn(func(c *driverCtx) error {
		n, err := csSend(c, client, 1500, func(i int) {
			if sc := conn.Load(); sc != nil && i%3 == 0 {
				_ = sc.SetReadDeadline(csLongAgo)
			}
		})
		sent.Store(int64(n))
		return err
	})
	got := 0
	err = driverAwait(c, co.Future(func(cc *co.Ctx) error {
		sc := co.Conn(cc, server)
		conn.Store(sc)
		var sink csSink
		buf := make([]byte, 64)
		for i := 0; ; i++ {
			if i%16 == 5 {
				_ = sc.SetReadDeadline(time.Now().Add(time.Duration(1+i%50) * time.Microsecond))
			}
			p := buf[:1+i*11%len(buf)]
			n, err := sc.Read(p)
			if err := sink.take(p[:n]); err != nil {
				return err
			}
			switch {
			case err == nil:
			case errors.Is(err, io.EOF):
				got = sink.next
				return nil
			case csIsDeadline(err):
				_ = sc.SetReadDeadline(time.Time{})
			default:
				return err
			}
		}
	}))
	if err != nil {
		return err
	}
	if err := c.join(sender); err != nil {
		return err
	}
	return driverCheck(int64(got) == sent.Load(), "read %d bytes to EOF, %d were sent", got, sent.Load())
}

// csWriteTotal is the size of the numbered streams the write behaviours
// send: far more than the socket buffers hold, so writes wait.
const csWriteTotal = 1 << 20

// csReceive reads a numbered stream to EOF in reads of varying size,
// yielding between them, calling after(i) after read i, and checks that
// it is exactly total bytes long.
func csReceive(c *driverCtx, r *wnet.TCPStream, total int, after func(i int)) (err error) {
	// A failed reader closes its end, so that a writer waiting for room
	// fails too instead of waiting for good.
	defer func() {
		if err != nil {
			_ = r.Close()
		}
	}()
	var sink csSink
	buf := make([]byte, 4096)
	for i := 0; ; i++ {
		n, err := driverAwaitR(c, r.Read(buf[:512+i*97%(len(buf)-512)]))
		if err := sink.take(buf[:n]); err != nil {
			return err
		}
		if errors.Is(err, io.EOF) {
			return driverCheck(sink.next == total, "read %d bytes to EOF, the writer reported %d written", sink.next, total)
		}
		if err != nil {
			return err
		}
		if after != nil {
			after(i)
		}
		if i%2 == 0 {
			driverAwait(c, core.Yield())
		}
	}
}

// csPair returns the ends of a loopback TCP connection for a behaviour
// that needs the runtime's timer (errDriverNoTimer without one). With
// smallSend the client's send buffer is small, so that its writes wait
// for the reader often. (The receive buffer stays at least a loopback
// segment: see testDriverLargeTransfer.)
func csPair(c *driverCtx, smallSend bool) (client, server *wnet.TCPStream, ln *wnet.TCPListener, err error) {
	if !csHasTimer(c) {
		return nil, nil, nil, errDriverNoTimer
	}
	if client, server, ln, err = driverPair(c); err != nil || !smallSend {
		return client, server, ln, err
	}
	if err = client.SetWriteBuffer(32 << 10); err == nil {
		err = server.SetReadBuffer(128 << 10)
	}
	if err != nil {
		driverClose(client, server, ln)
		return nil, nil, nil, err
	}
	return client, server, ln, nil
}

// csWriteNumbered writes csWriteTotal bytes of a numbered stream with
// write, in chunks of varying size, carrying on each time from the count
// the write reports, whether it timed out or not; after a timeout it
// calls timedOut. It returns the first other failure.
func csWriteNumbered(write func(i int, p []byte) (int, error), timedOut func()) error {
	chunk := make([]byte, 32<<10)
	for i, sent := 0, 0; sent < csWriteTotal; i++ {
		p := chunk[:min(csWriteTotal-sent, 1+i*7919%len(chunk))]
		for j := range p {
			p[j] = csByte(sent + j)
		}
		n, err := write(i, p)
		if n < 0 || n > len(p) {
			return fmt.Errorf("a write of %d bytes reported %d", len(p), n)
		}
		sent += n
		if err != nil {
			if !csIsDeadline(err) {
				return err
			}
			timedOut()
		}
	}
	return nil
}

// csFinishWrite ends a write behaviour: after a writer that finished
// (werr nil) it half-closes the stream and returns the reader's verdict.
// After a writer that failed it closes the stream, so that the reader
// stops too, and reports both: a reader that fails closes its end, which
// is what stops the writer.
func csFinishWrite(c *driverCtx, client *wnet.TCPStream, reader *core.JoinHandle[error], werr error) error {
	if werr == nil {
		if werr = client.CloseWrite(); werr == nil {
			return c.join(reader)
		}
	}
	_ = client.Close()
	return errors.Join(c.join(reader), werr)
}

// testDriverTimedOutWritesReportWhatTheyWrote writes a numbered stream
// with io.Timeout around every write, most of them with a deadline of
// zero, and carries on from the count each write reports, timed out or
// not: if a write the deadline stopped had written bytes it did not
// report, the reader sees them twice.
func testDriverTimedOutWritesReportWhatTheyWrote(c *driverCtx) error {
	client, server, ln, err := csPair(c, true)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	reader := c.spawn(func(c *driverCtx) error { return csReceive(c, server, csWriteTotal, nil) })
	err = csWriteNumbered(func(i int, p []byte) (int, error) {
		var d time.Duration
		if i%8 == 7 {
			d = time.Duration(1+i%40) * time.Microsecond
		}
		return driverAwaitR(c, wio.Timeout(client.Write(p), d))
	}, func() {
		driverAwait(c, core.Yield()) // let the reader make room
	})
	return csFinishWrite(c, client, reader, err)
}

// testDriverConnWriteDeadlinesReportWhatTheyWrote writes a numbered stream
// through co.Conn while the reading task aborts the pending write every
// few reads by moving the write deadline into the past; the writer
// carries on from the count each Write reports, as a net.Conn's user
// does.
func testDriverConnWriteDeadlinesReportWhatTheyWrote(c *driverCtx) error {
	client, server, ln, err := csPair(c, true)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	var conn atomic.Pointer[co.StreamConn]
	reader := c.spawn(func(c *driverCtx) error {
		return csReceive(c, server, csWriteTotal, func(i int) {
			if sc := conn.Load(); sc != nil && i%3 == 0 {
				_ = sc.SetWriteDeadline(csLongAgo)
			}
		})
	})
	err = driverAwait(c, co.Future(func(cc *co.Ctx) error {
		sc := co.Conn(cc, client)
		conn.Store(sc)
		return csWriteNumbered(func(_ int, p []byte) (int, error) {
			return sc.Write(p)
		}, func() {
			_ = sc.SetWriteDeadline(time.Time{})
			cc.Yield()
		})
	}))
	return csFinishWrite(c, client, reader, err)
}
