// Command echo-bench runs the W8 (tcp_echo_rr) and W9 (tcp_stream)
// workloads against the weft echo server and its plain-Go counterpart, in
// alternation, and prints the median, minimum and maximum of each figure
// and the ratio to Go.
//
//	echo-bench [-runs 5] [-w8] [-w9] [-set scheduler.kind=currentthread,...]
//
// Each server runs in a child process (this executable, started again), so
// its CPU time is what its own getrusage reports.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/weftrt/weft/tools/internal/echo"

	// A server may be composed with a plugin module (-set
	// driver.kind=plugin,...).
	_ "github.com/weftrt/weft/plugins"
)

func main() {
	echo.ServeChildIfRequested()

	runs := flag.Int("runs", 5, "runs of each workload per server")
	w8 := flag.Bool("w8", true, "run W8 tcp_echo_rr")
	w9 := flag.Bool("w9", true, "run W9 tcp_stream")
	set := flag.String("set", "", "weft settings for the weft server, key=value,... (over scheduler.kind=currentthread, driver.kind=epoll, timer.kind=wheel)")
	buf := flag.Int("buffer", 0, "copy buffer per connection, in bytes, for every server (default: 8 KiB for W8, 64 KiB for W9)")
	impls := flag.String("impls", "weft,go", "servers to run: weft, go, go-copy")
	flag.Parse()

	srv := echo.Server{Settings: map[string]any{}}
	if *set != "" {
		for _, kv := range strings.Split(*set, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				log.Fatalf("-set: %q is not key=value", kv)
			}
			srv.Settings[k] = v
		}
	}
	var servers []echo.Impl
	for _, s := range strings.Split(*impls, ",") {
		servers = append(servers, echo.Impl(s))
	}
	host, _ := os.Hostname()
	fmt.Printf("# %s, %s, GOMAXPROCS %d, %d runs, weft settings %v (over %v)\n", host, time.Now().UTC().Format(time.DateOnly), runtime.GOMAXPROCS(0), *runs, srv.Settings, echo.DefaultSettings())

	if *w8 {
		cfg := echo.W8Defaults()
		cfg.Server = withBuffer(srv, cfg.BufferSize, *buf)
		res := map[echo.Impl][]echo.W8Result{}
		for range *runs {
			for _, impl := range servers {
				r, err := echo.RunW8(impl, cfg)
				if err != nil {
					log.Fatalf("W8 %s: %v", impl, err)
				}
				res[impl] = append(res[impl], r)
			}
		}
		fmt.Printf("\nW8 tcp_echo_rr: %d connections x %d round trips of %d bytes (server buffer %d)\n", cfg.Conns, cfg.RoundTrips, cfg.MsgSize, cfg.BufferSize)
		fmt.Printf("%-8s %28s %28s %28s %28s\n", "server", "round trips/s", "p50", "p99", "server CPU per round trip")
		for _, impl := range servers {
			rs := res[impl]
			fmt.Printf("%-8s %28s %28s %28s %28s\n", impl,
				stat(rs, func(r echo.W8Result) float64 { return r.PerSecond }, "%.0f"),
				stat(rs, func(r echo.W8Result) float64 { return float64(r.P50) / 1e3 }, "%.0fµs"),
				stat(rs, func(r echo.W8Result) float64 { return float64(r.P99) / 1e3 }, "%.0fµs"),
				stat(rs, func(r echo.W8Result) float64 { return float64(r.CPUPerRoundTrip) / 1e3 }, "%.2fµs"))
		}
		if gs, ws := res[echo.Go], res[echo.Weft]; len(gs) > 0 && len(ws) > 0 {
			cpu := func(r echo.W8Result) float64 { return float64(r.CPUPerRoundTrip) }
			rate := func(r echo.W8Result) float64 { return r.PerSecond }
			fmt.Printf("weft/go: server CPU per round trip %.2fx (target <= 0.65), round trips/s %.2fx\n",
				median(ws, cpu)/median(gs, cpu), median(ws, rate)/median(gs, rate))
		}
	}
	if *w9 {
		cfg := echo.W9Defaults()
		cfg.Server = withBuffer(srv, cfg.BufferSize, *buf)
		res := map[echo.Impl][]echo.W9Result{}
		for range *runs {
			for _, impl := range servers {
				r, err := echo.RunW9(impl, cfg)
				if err != nil {
					log.Fatalf("W9 %s: %v", impl, err)
				}
				res[impl] = append(res[impl], r)
			}
		}
		fmt.Printf("\nW9 tcp_stream: %d connections each stream %d MiB in %d KiB writes and read the echo back (server buffer %d)\n", cfg.Conns, cfg.Bytes>>20, cfg.Chunk>>10, cfg.BufferSize)
		fmt.Printf("%-8s %28s %28s\n", "server", "GB/s", "server CPU")
		for _, impl := range servers {
			rs := res[impl]
			fmt.Printf("%-8s %28s %28s\n", impl,
				stat(rs, func(r echo.W9Result) float64 { return r.GBps }, "%.2f"),
				stat(rs, func(r echo.W9Result) float64 { return float64(r.ServerCPU) / 1e6 }, "%.0fms"))
		}
		if gs, ws := res[echo.Go], res[echo.Weft]; len(gs) > 0 && len(ws) > 0 {
			rate := func(r echo.W9Result) float64 { return r.GBps }
			fmt.Printf("weft/go: GB/s %.2fx (target >= 1.0)\n", median(ws, rate)/median(gs, rate))
		}
	}
}

// withBuffer returns srv with the buffer size from the flag, or the
// workload's default when the flag is unset.
func withBuffer(srv echo.Server, def, flagged int) echo.Server {
	srv.BufferSize = def
	if flagged > 0 {
		srv.BufferSize = flagged
	}
	return srv
}

// median returns the median of f over rs.
func median[R any](rs []R, f func(R) float64) float64 {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// stat formats "median [min, max]".
func stat[R any](rs []R, f func(R) float64, format string) string {
	vs := make([]float64, len(rs))
	for i, r := range rs {
		vs[i] = f(r)
	}
	slices.Sort(vs)
	return fmt.Sprintf(format+" ["+format+", "+format+"]", vs[len(vs)/2], vs[0], vs[len(vs)-1])
}
