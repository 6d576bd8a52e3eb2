package echo_test

import (
	"testing"

	"github.com/weftrt/weft/tools/internal/echo"
)

// BenchmarkW8TCPEchoRR runs tcp_echo_rr once per iteration against each
// server. Run it with -benchtime=1x -count=5 for BENCHMARKS.md's medians.
func BenchmarkW8TCPEchoRR(b *testing.B) {
	for _, impl := range []echo.Impl{echo.Weft, echo.Go} {
		b.Run(string(impl), func(b *testing.B) {
			for range b.N {
				r, err := echo.RunW8(impl, echo.W8Defaults())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.PerSecond, "rt/s")
				b.ReportMetric(float64(r.P50.Nanoseconds()), "p50-ns")
				b.ReportMetric(float64(r.P99.Nanoseconds()), "p99-ns")
				b.ReportMetric(float64(r.CPUPerRoundTrip.Nanoseconds()), "server-cpu-ns/rt")
			}
		})
	}
}

// BenchmarkW9TCPStream runs tcp_stream once per iteration against each
// server.
func BenchmarkW9TCPStream(b *testing.B) {
	for _, impl := range []echo.Impl{echo.Weft, echo.Go, echo.GoCopy} {
		b.Run(string(impl), func(b *testing.B) {
			for range b.N {
				r, err := echo.RunW9(impl, echo.W9Defaults())
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.GBps, "GB/s")
				b.ReportMetric(float64(r.ServerCPU.Milliseconds()), "server-cpu-ms")
			}
		})
	}
}
