package conformance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	gonet "net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"
)

// The behaviours of this file share one stream between several coroutine
// tasks, the way Go programs share a net.Conn between goroutines: each
// task wraps the same stream in a co.Conn of its own (or runs its own
// Copy from it) and reads, or writes, at the same time as the others. Two
// of them port golang.org/x/net/nettest's RacyRead and RacyWrite into
// coroutine tasks.

// concurrentCase adapts a behaviour written as one coroutine task body;
// with needsTimer it is skipped on a runtime that cannot enforce
// deadlines. A hang, which is what a forgotten waiter causes, fails it
// after the watchdog's limit.
func concurrentCase(needsTimer bool, body func(c *co.Ctx) error) func(*testing.T, func(*rt.Builder)) {
	return func(t *testing.T, configure func(*rt.Builder)) {
		r := driverRuntime(t, configure)
		if tm := r.Time(); needsTimer && (tm == nil || tm.Timer == nil) {
			t.Skip(errDriverNoTimer)
		}
		coRun(t, r, body)
	}
}

// concurrentPair returns the two ends of a fresh loopback TCP connection
// and its listener.
func concurrentPair(c *co.Ctx) (client, server *wnet.TCPStream, ln *wnet.TCPListener, err error) {
	ln, err = wnet.ListenTCP(c.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, nil, err
	}
	client, err = co.AwaitResult(c, wnet.DialTCP("tcp", ln.Addr().String()))
	if err != nil {
		ln.Close()
		return nil, nil, nil, err
	}
	server, err = co.AwaitResult(c, ln.Accept())
	if err != nil {
		driverClose(client, ln)
		return nil, nil, nil, err
	}
	return client, server, ln, nil
}

// concurrentJoin awaits every task and returns the first error.
func concurrentJoin(c *co.Ctx, hs []*core.JoinHandle[error]) error {
	var first error
	for _, h := range hs {
		if err := coJoin(c, h); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// concurrentData is n pseudo-random bytes, none of them zero (a reader
// poisons its buffer with zeros, so bytes it never received show), from a
// fixed seed so every run sends the same stream.
func concurrentData(n int) []byte {
	rng := rand.New(rand.NewPCG(14, 2))
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(1 + rng.IntN(255))
	}
	return p
}

// concurrentWindow is the length of the prefix by which a received chunk
// is located in the data; windows of random bytes this long occur once.
const concurrentWindow = 8

// concurrentDelivery checks that chunks, the reads of several readers of
// one stream that carried data, hand out each byte of data to exactly one
// reader: every chunk at least concurrentWindow long is found at its
// place in data, no two of them overlap, and the shorter chunks hold
// exactly the bytes left over, as a multiset.
func concurrentDelivery(data []byte, chunks [][]byte) error {
	total := 0
	for _, ch := range chunks {
		total += len(ch)
	}
	if total != len(data) {
		return fmt.Errorf("the readers received %d bytes between them, want the %d sent: each byte to exactly one reader", total, len(data))
	}
	at := make(map[uint64]int, len(data))
	for i := 0; i+concurrentWindow <= len(data); i++ {
		k := binary.LittleEndian.Uint64(data[i:])
		if _, dup := at[k]; dup {
			return fmt.Errorf("conformance: the test data repeats the window at %d; change its seed", i)
		}
		at[k] = i
	}
	owner := make([]int, len(data)) // 1 + the chunk that delivered the byte
	var rest [256]int
	for ci, ch := range chunks {
		if len(ch) < concurrentWindow {
			for _, b := range ch {
				rest[b]++
			}
			continue
		}
		pos, ok := at[binary.LittleEndian.Uint64(ch)]
		if !ok || pos+len(ch) > len(data) || !bytes.Equal(data[pos:pos+len(ch)], ch) {
			return fmt.Errorf("a reader received %d bytes that are not a run of the stream (%x...)", len(ch), ch[:concurrentWindow])
		}
		for i := pos; i < pos+len(ch); i++ {
			if owner[i] != 0 {
				return fmt.Errorf("byte %d of the stream was received twice, by reads %d and %d", i, owner[i]-1, ci)
			}
			owner[i] = ci + 1
		}
	}
	for i, b := range data {
		if owner[i] == 0 {
			rest[b]--
		}
	}
	for b, n := range rest {
		if n != 0 {
			return fmt.Errorf("the short reads received byte value %d %+d times more than the stream holds outside the long reads", b, n)
		}
	}
	return nil
}

// concurrentSend writes data to s from a co.Conn of its own in pieces of
// varying size, yielding between some of them so that readers find the
// stream empty and wait, then shuts the write side down.
func concurrentSend(c *co.Ctx, s *wnet.TCPStream, data []byte) error {
	conn := co.Conn(c, s)
	for i, off := 0, 0; off < len(data); i++ {
		n := min(1+i*997%8192, len(data)-off)
		if _, err := conn.Write(data[off : off+n]); err != nil {
			return err
		}
		off += n
		if i%3 == 0 {
			c.Yield()
		}
	}
	return s.CloseWrite()
}

func testConcurrentConnReaders(c *co.Ctx) error {
	client, server, ln, err := concurrentPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	data := concurrentData(256 << 10)
	// Readers with buffers of different sizes, each its own co.Conn on
	// the server end; all of them read until the end of the stream.
	sizes := []int{7, 600, 4096, 32 << 10}
	got := make([][][]byte, len(sizes))
	var hs []*core.JoinHandle[error]
	for i, size := range sizes {
		hs = append(hs, co.Go(c, func(c *co.Ctx) error {
			conn := co.Conn(c, server)
			buf := make([]byte, size)
			for {
				clear(buf)
				n, err := conn.Read(buf)
				if n > 0 {
					got[i] = append(got[i], bytes.Clone(buf[:n]))
				}
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return fmt.Errorf("reader %d: %w", i, err)
				}
			}
		}))
	}
	hs = append(hs, co.Go(c, func(c *co.Ctx) error { return concurrentSend(c, client, data) }))
	if err := concurrentJoin(c, hs); err != nil {
		return err
	}
	var chunks [][]byte
	for _, g := range got {
		chunks = append(chunks, g...)
	}
	return concurrentDelivery(data, chunks)
}

// chunkSink is a wio.Writer that keeps a copy of each write.
type chunkSink struct{ chunks [][]byte }

func (s *chunkSink) Write(p []byte) core.Future[core.Result[int]] {
	s.chunks = append(s.chunks, bytes.Clone(p))
	return wio.Ready(len(p), nil)
}

func testConcurrentCopies(c *co.Ctx) error {
	client, server, ln, err := concurrentPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	data := concurrentData(256 << 10)
	// Three Copy futures from the same stream, each in its own task, each
	// into a sink that keeps what every read delivered.
	sizes := []int{100, 1500, 16 << 10}
	sinks := make([]chunkSink, len(sizes))
	var hs []*core.JoinHandle[error]
	for i, size := range sizes {
		hs = append(hs, co.Go(c, func(c *co.Ctx) error {
			_, err := co.AwaitResult(c, wio.CopyBuffer(&sinks[i], server, make([]byte, size)))
			return err
		}))
	}
	hs = append(hs, co.Go(c, func(c *co.Ctx) error { return concurrentSend(c, client, data) }))
	if err := concurrentJoin(c, hs); err != nil {
		return err
	}
	var chunks [][]byte
	for _, s := range sinks {
		chunks = append(chunks, s.chunks...)
	}
	return concurrentDelivery(data, chunks)
}

// A message of the writers' behaviour: a header (writer, sequence number,
// payload length) and a payload that is a function of the three.
const concurrentHeader = 9

func concurrentMessage(writer, seq int) []byte {
	n := concurrentSize(writer, seq)
	m := make([]byte, concurrentHeader+n)
	m[0] = byte(writer)
	binary.BigEndian.PutUint32(m[1:], uint32(seq))
	binary.BigEndian.PutUint32(m[5:], uint32(n))
	for i := range n {
		m[concurrentHeader+i] = byte(writer*61 + seq*17 + i + i>>8)
	}
	return m
}

// concurrentSize is the payload length of message seq of a writer: small
// ones, which a write sends at once, alternate with ones larger than the
// socket buffers hold, which take several short writes and suspend the
// writer mid-message.
func concurrentSize(writer, seq int) int {
	if seq%2 == 0 {
		return 1 + (writer*131+seq*71)%1400
	}
	return 512<<10 + (writer*7919+seq*3217)%(256<<10)
}

func testConcurrentConnWriters(c *co.Ctx) error {
	client, server, ln, err := concurrentPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	// Buffers much smaller than the large messages (but not smaller than
	// a loopback segment; see testDriverLargeTransfer).
	if err := client.SetWriteBuffer(128 << 10); err != nil {
		return err
	}
	if err := server.SetReadBuffer(128 << 10); err != nil {
		return err
	}
	const writers, messages = 4, 6
	var started atomic.Int32
	var hs []*core.JoinHandle[error]
	for w := range writers {
		hs = append(hs, co.Go(c, func(c *co.Ctx) error {
			conn := co.Conn(c, client)
			started.Add(1)
			for seq := range messages {
				m := concurrentMessage(w, seq)
				n, err := conn.Write(m)
				if err != nil {
					return fmt.Errorf("writer %d, message %d: %w", w, seq, err)
				}
				if n != len(m) {
					return fmt.Errorf("writer %d, message %d: Write returned %d of %d bytes and no error", w, seq, n, len(m))
				}
			}
			return nil
		}))
	}
	// One reader takes the messages apart. Were two writes interleaved,
	// a header would be read out of a payload, or a payload would carry
	// another message's bytes. It starts once every writer is writing,
	// so that the first of them fills the socket and waits mid-message
	// while the others want to write.
	reader := co.Go(c, func(c *co.Ctx) (err error) {
		defer func() {
			if err != nil {
				server.Close() // fail the writers waiting for room
			}
		}()
		for started.Load() < writers {
			c.Yield()
		}
		conn := co.Conn(c, server)
		next := make([]int, writers)
		hdr := make([]byte, concurrentHeader)
		var msg []byte
		for k := 0; ; k++ {
			if _, err := io.ReadFull(conn, hdr); err != nil {
				if err == io.EOF {
					break
				}
				return fmt.Errorf("message %d: reading the header: %w", k, err)
			}
			w, seq, n := int(hdr[0]), int(binary.BigEndian.Uint32(hdr[1:])), int(binary.BigEndian.Uint32(hdr[5:]))
			if w >= writers || seq != next[w] || n != concurrentSize(w, seq) {
				return fmt.Errorf("message %d of the stream has the header %x, which no writer sent next: two writes were interleaved", k, hdr)
			}
			want := concurrentMessage(w, seq)
			msg = append(append(msg[:0], hdr...), make([]byte, n)...)
			if _, err := io.ReadFull(conn, msg[concurrentHeader:]); err != nil {
				return fmt.Errorf("message %d (writer %d, number %d): reading %d bytes: %w", k, w, seq, n, err)
			}
			if !bytes.Equal(msg, want) {
				return fmt.Errorf("message %d (writer %d, number %d, %d bytes) carries another write's bytes: two writes were interleaved", k, w, seq, n)
			}
			next[w]++
		}
		for w, n := range next {
			if n != messages {
				return fmt.Errorf("writer %d's messages: %d arrived, want %d", w, n, messages)
			}
		}
		return nil
	})
	werr := concurrentJoin(c, hs)
	if werr == nil {
		werr = client.CloseWrite()
	}
	// The reader's verdict first: a writer's error may only be the
	// consequence of the reader giving up.
	if err := coJoin(c, reader); err != nil {
		return err
	}
	return werr
}

// concurrentTimeout checks that err is a deadline's: a net.Error whose
// Timeout reports true.
func concurrentTimeout(what string, err error) error {
	var ne gonet.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return nil
	}
	return fmt.Errorf("%s failed with %v (%T), want a net.Error whose Timeout reports true", what, err, err)
}

// The racy behaviours' shape is nettest's: ten tasks, a hundred 1 KiB
// operations each with a 1 ms deadline, mutating the buffer right after
// each returns. Whether an operation times out or completes depends on
// the machine; the verdict only asks that each does one or the other, and
// the race detector watches the buffers and the shared stream.
const racyTasks, racyOps, racyBuf = 10, 100, 1024

// racyLoop is one task of a racy behaviour: racyOps calls of op, each with
// a deadline 1 ms ahead, overwriting the buffer as soon as a call returns
// (an operation that returned, timed out or not, must no longer touch
// it). An error must be a timeout; the deadline then moves on.
func racyLoop(what string, op func([]byte) (int, error), setDeadline func(time.Time) error) error {
	_ = setDeadline(time.Now().Add(time.Millisecond))
	b1, b2 := make([]byte, racyBuf), make([]byte, racyBuf)
	for range racyOps {
		_, err := op(b1)
		copy(b1, b2)
		if err != nil {
			if err := concurrentTimeout(what, err); err != nil {
				return err
			}
			_ = setDeadline(time.Now().Add(time.Millisecond))
		}
	}
	return nil
}

func testRacyConnReads(c *co.Ctx) error {
	client, server, ln, err := concurrentPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, ln)
	var stop atomic.Bool
	writer := co.Go(c, func(c *co.Ctx) error {
		conn := co.Conn(c, client)
		buf := concurrentData(racyBuf)
		for !stop.Load() {
			if _, err := conn.Write(buf); err != nil {
				return nil // the reading end closed
			}
		}
		return nil
	})
	var hs []*core.JoinHandle[error]
	for range racyTasks {
		hs = append(hs, co.Go(c, func(c *co.Ctx) error {
			conn := co.Conn(c, server)
			return racyLoop("a Read", conn.Read, conn.SetReadDeadline)
		}))
	}
	err = concurrentJoin(c, hs)
	stop.Store(true)
	server.Close() // fails a write the writer may be waiting in
	if werr := coJoin(c, writer); err == nil {
		err = werr
	}
	return err
}

func testRacyConnWrites(c *co.Ctx) error {
	client, server, ln, err := concurrentPair(c)
	if err != nil {
		return err
	}
	defer driverClose(client, server, ln)
	reader := co.Go(c, func(c *co.Ctx) error {
		_, err := io.Copy(io.Discard, co.Conn(c, server))
		return err
	})
	var hs []*core.JoinHandle[error]
	for range racyTasks {
		hs = append(hs, co.Go(c, func(c *co.Ctx) error {
			conn := co.Conn(c, client)
			return racyLoop("a Write", conn.Write, conn.SetWriteDeadline)
		}))
	}
	err = concurrentJoin(c, hs)
	if cerr := client.CloseWrite(); err == nil {
		err = cerr
	}
	if rerr := coJoin(c, reader); err == nil {
		err = rerr
	}
	return err
}
