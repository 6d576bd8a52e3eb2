package mpsc_test

import (
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

// The benchmarks here measure one send and one receive on one goroutine,
// without a runtime: the cost of the channel itself. The runtime
// workloads (W4, W6) live in conformance and run from each scheduler
// module.

// BenchmarkSendIntoRecv reuses one SendFuture: no allocation.
func BenchmarkSendIntoRecv(b *testing.B) {
	tx, rx := mpsc.New[int](1)
	cx := core.NewContext(nil)
	var f mpsc.SendFuture[int]
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tx.SendInto(&f, i).Poll(cx)
		rx.Recv().Poll(cx)
	}
}

// BenchmarkSendRecv allocates a SendFuture per send, for comparison.
func BenchmarkSendRecv(b *testing.B) {
	tx, rx := mpsc.New[int](1)
	cx := core.NewContext(nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tx.Send(i).Poll(cx)
		rx.Recv().Poll(cx)
	}
}

// BenchmarkTrySendTryRecv is the goroutine-side API.
func BenchmarkTrySendTryRecv(b *testing.B) {
	tx, rx := mpsc.New[int](1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = tx.TrySend(i)
		_, _ = rx.TryRecv()
	}
}

// BenchmarkUnboundedSendRecv is the unbounded channel's send and receive.
func BenchmarkUnboundedSendRecv(b *testing.B) {
	tx, rx := mpsc.NewUnbounded[int]()
	cx := core.NewContext(nil)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = tx.Send(i)
		rx.Recv().Poll(cx)
	}
}

// BenchmarkGoChanSendRecv is a buffered Go channel on one goroutine.
func BenchmarkGoChanSendRecv(b *testing.B) {
	ch := make(chan int, 1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ch <- i
		<-ch
	}
}
