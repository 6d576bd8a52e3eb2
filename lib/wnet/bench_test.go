package wnet_test

import (
	"io"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
)

// memDriver is a driver whose streams never wait: a read fills its buffer
// (until reads run out, then it is the end of the stream) and a write
// takes all of its buffer. Its futures can be re-armed, as real drivers'
// are, and it counts the futures it makes.
type memDriver struct {
	core.Driver
	reads   int // reads left before the end of the stream; < 0 for no end
	futures int
}

func (d *memDriver) Connect(string, string, core.SocketOptions) core.Future[core.Result[core.Handle]] {
	return wio.Ready(core.Handle(1), nil)
}
func (d *memDriver) SetOption(core.Handle, core.SocketOption, int) error { return nil }
func (d *memDriver) CloseHandle(core.Handle) error                       { return nil }

func (d *memDriver) Read(_ core.Handle, p []byte) core.Future[core.Result[int]] {
	d.futures++
	return &memOp{d: d, p: p, read: true}
}

func (d *memDriver) Write(_ core.Handle, p []byte) core.Future[core.Result[int]] {
	d.futures++
	return &memOp{d: d, p: p}
}

type memOp struct {
	d          *memDriver
	p          []byte
	read, done bool
}

func (o *memOp) Poll(*core.Context) (core.Result[int], bool) {
	o.done = true
	if o.read {
		if o.d.reads == 0 {
			return core.Result[int]{Err: io.EOF}, true
		}
		if o.d.reads > 0 {
			o.d.reads--
		}
	}
	return core.Result[int]{Value: len(o.p)}, true
}

func (o *memOp) Rearm(p []byte) bool {
	if !o.done {
		return false
	}
	o.p, o.done = p, false
	return true
}

// memStream dials a stream on d, polling with cx.
func memStream(b *testing.B, cx *core.Context) *wnet.TCPStream {
	r, ok := wnet.DialTCP("tcp", "127.0.0.1:1").Poll(cx)
	if !ok || r.Err != nil {
		b.Fatalf("dial on the in-memory driver: %v, %v", ok, r.Err)
	}
	return r.Value
}

func BenchmarkPollReadLoop(b *testing.B) {
	d := &memDriver{reads: -1}
	cx := spi.NewWorkerContext(&worker{d: d}).Context()
	s := memStream(b, cx)
	buf := make([]byte, 512)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err, ok := s.PollRead(cx, buf); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
	b.ReportMetric(float64(d.futures)/float64(b.N), "futures/op")
}

// BenchmarkCopyChunk copies b.N chunks between two streams in one Copy.
func BenchmarkCopyChunk(b *testing.B) {
	src, dst := &memDriver{}, &memDriver{reads: -1}
	cx := spi.NewWorkerContext(&worker{d: src}).Context()
	from := memStream(b, cx)
	to := memStream(b, spi.NewWorkerContext(&worker{d: dst}).Context())
	src.reads = b.N
	c := wio.CopyBuffer(to, from, make([]byte, 512))
	b.ReportAllocs()
	b.ResetTimer()
	r, ok := c.Poll(cx)
	if !ok || r.Err != nil || r.Value != int64(b.N)*512 {
		b.Fatal(ok, r)
	}
	b.ReportMetric(float64(src.futures+dst.futures)/float64(b.N), "futures/op")
}

// BenchmarkConnRead reads through a co.Conn on a stream, inside a
// coroutine task polled by hand (it never waits).
func BenchmarkConnRead(b *testing.B) {
	benchConn(b, func(conn *co.StreamConn, buf []byte) error {
		_, err := conn.Read(buf)
		return err
	})
}

// BenchmarkConnWrite writes through a co.Conn on a stream.
func BenchmarkConnWrite(b *testing.B) {
	benchConn(b, func(conn *co.StreamConn, buf []byte) error {
		_, err := conn.Write(buf)
		return err
	})
}

func benchConn(b *testing.B, op func(conn *co.StreamConn, buf []byte) error) {
	d := &memDriver{reads: -1}
	cx := spi.NewWorkerContext(&worker{d: d}).Context()
	s := memStream(b, cx)
	buf := make([]byte, 512)
	task := co.Future(func(c *co.Ctx) error {
		conn := co.Conn(c, s)
		if err := op(conn, buf); err != nil { // the first allocates the operation
			return err
		}
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if err := op(conn, buf); err != nil {
				return err
			}
		}
		b.StopTimer()
		return nil
	})
	err, ok := task.Poll(cx)
	if !ok || err != nil {
		b.Fatal(ok, err)
	}
	b.ReportMetric(float64(d.futures)/float64(b.N), "futures/op")
}
