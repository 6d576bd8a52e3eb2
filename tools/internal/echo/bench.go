package echo

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// W8Config is the shape of tcp_echo_rr.
type W8Config struct {
	Server
	// Conns connections each make RoundTrips round trips of MsgSize
	// bytes: write the message, read its echo.
	Conns, RoundTrips, MsgSize int
}

// W8Defaults is W8 as BENCHMARKS.md defines it: 50 connections x 2,000
// round trips of 64 bytes over loopback.
func W8Defaults() W8Config {
	return W8Config{Server: Server{BufferSize: DefaultBufferSize}, Conns: 50, RoundTrips: 2000, MsgSize: 64}
}

// W8Result is one run of tcp_echo_rr.
type W8Result struct {
	Impl       Impl
	RoundTrips int
	// Elapsed is the wall time of all round trips, connections already
	// established.
	Elapsed time.Duration
	// PerSecond is RoundTrips / Elapsed.
	PerSecond float64
	// P50 and P99 are round-trip latencies seen by the client.
	P50, P99 time.Duration
	// ServerCPU is the server process's user+system CPU time over the
	// round trips; CPUPerRoundTrip is ServerCPU / RoundTrips.
	ServerCPU       time.Duration
	CPUPerRoundTrip time.Duration
}

// String formats the result as one line.
func (r W8Result) String() string {
	return fmt.Sprintf("%-8s %7.0f rt/s  p50 %8v  p99 %8v  server CPU %v/rt", r.Impl, r.PerSecond, r.P50, r.P99, r.CPUPerRoundTrip)
}

// RunW8 runs tcp_echo_rr against impl's server, in a child process (see
// the package documentation). The client is plain Go: one goroutine per
// connection.
func RunW8(impl Impl, cfg W8Config) (W8Result, error) {
	if cfg.Conns < 1 || cfg.RoundTrips < 1 || cfg.MsgSize < 1 {
		return W8Result{}, fmt.Errorf("echo: W8 needs at least one connection, round trip and byte: %+v", cfg)
	}
	c, err := startChild(impl, cfg.Server)
	if err != nil {
		return W8Result{}, err
	}
	res, err := runW8(c, impl, cfg)
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return res, err
}

func runW8(c *child, impl Impl, cfg W8Config) (W8Result, error) {
	conns, err := dialAll(c.addr, cfg.Conns)
	defer closeAll(conns)
	if err != nil {
		return W8Result{}, err
	}
	lat := make([]time.Duration, cfg.Conns*cfg.RoundTrips)
	if err := c.startClock(); err != nil {
		return W8Result{}, err
	}
	start := time.Now()
	err = forEach(conns, func(i int, conn net.Conn) error {
		msg := make([]byte, cfg.MsgSize)
		for k := range msg {
			msg[k] = byte(i + k)
		}
		got := make([]byte, cfg.MsgSize)
		mine := lat[i*cfg.RoundTrips : (i+1)*cfg.RoundTrips]
		for r := range mine {
			t0 := time.Now()
			if _, err := conn.Write(msg); err != nil {
				return err
			}
			if _, err := io.ReadFull(conn, got); err != nil {
				return err
			}
			mine[r] = time.Since(t0)
			if got[0] != msg[0] || got[len(got)-1] != msg[len(msg)-1] {
				return errors.New("echo: the echo differs from the message")
			}
		}
		return nil
	})
	elapsed := time.Since(start)
	if err != nil {
		return W8Result{}, err
	}
	cpu, err := c.stopClock()
	if err != nil {
		return W8Result{}, err
	}
	slices.Sort(lat)
	n := len(lat)
	return W8Result{
		Impl:            impl,
		RoundTrips:      n,
		Elapsed:         elapsed,
		PerSecond:       float64(n) / elapsed.Seconds(),
		P50:             lat[n/2],
		P99:             lat[n*99/100],
		ServerCPU:       cpu,
		CPUPerRoundTrip: cpu / time.Duration(n),
	}, nil
}

// W9Config is the shape of tcp_stream.
type W9Config struct {
	Server
	// Conns connections each stream Bytes in writes of Chunk bytes and
	// read the echo back, concurrently.
	Conns int
	Bytes int64
	Chunk int
}

// W9Defaults is W9 as BENCHMARKS.md defines it: 8 connections each stream
// 64 MiB in 16 KiB writes and read the echo back. The servers (both of
// them) copy through 64 KiB buffers, as a streaming server would; the
// workload does not fix the server's buffer, and with 8 KiB every server
// spends most of its time on system calls.
func W9Defaults() W9Config {
	return W9Config{Server: Server{BufferSize: 64 << 10}, Conns: 8, Bytes: 64 << 20, Chunk: 16 << 10}
}

// W9Result is one run of tcp_stream.
type W9Result struct {
	Impl Impl
	// Bytes is what was echoed in all (each byte crossed loopback twice).
	Bytes   int64
	Elapsed time.Duration
	// GBps is Bytes / Elapsed, in 10^9 bytes per second.
	GBps float64
	// ServerCPU is the server process's CPU time over the transfer.
	ServerCPU time.Duration
}

// String formats the result as one line.
func (r W9Result) String() string {
	return fmt.Sprintf("%-8s %6.2f GB/s  server CPU %v", r.Impl, r.GBps, r.ServerCPU)
}

// RunW9 runs tcp_stream against impl's server, in a child process. The
// client is plain Go: per connection, one goroutine writes and another
// reads the echo until the server closes.
func RunW9(impl Impl, cfg W9Config) (W9Result, error) {
	if cfg.Conns < 1 || cfg.Bytes < 1 || cfg.Chunk < 1 {
		return W9Result{}, fmt.Errorf("echo: W9 needs at least one connection, byte and chunk byte: %+v", cfg)
	}
	c, err := startChild(impl, cfg.Server)
	if err != nil {
		return W9Result{}, err
	}
	res, err := runW9(c, impl, cfg)
	if cerr := c.close(); err == nil {
		err = cerr
	}
	return res, err
}

func runW9(c *child, impl Impl, cfg W9Config) (W9Result, error) {
	conns, err := dialAll(c.addr, cfg.Conns)
	defer closeAll(conns)
	if err != nil {
		return W9Result{}, err
	}
	if err := c.startClock(); err != nil {
		return W9Result{}, err
	}
	start := time.Now()
	err = forEach(conns, func(i int, conn net.Conn) error {
		writeErr := make(chan error, 1)
		go func() {
			chunk := make([]byte, cfg.Chunk)
			for k := range chunk {
				chunk[k] = byte(k + i)
			}
			for sent := int64(0); sent < cfg.Bytes; {
				p := chunk[:min(int64(len(chunk)), cfg.Bytes-sent)]
				n, err := conn.Write(p)
				sent += int64(n)
				if err != nil {
					writeErr <- err
					return
				}
			}
			writeErr <- conn.(*net.TCPConn).CloseWrite()
		}()
		buf := make([]byte, 64<<10)
		var got int64
		for {
			n, err := conn.Read(buf)
			got += int64(n)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
		if err := <-writeErr; err != nil {
			return err
		}
		if got != cfg.Bytes {
			return fmt.Errorf("echo: connection %d got %d bytes back of %d", i, got, cfg.Bytes)
		}
		return nil
	})
	elapsed := time.Since(start)
	if err != nil {
		return W9Result{}, err
	}
	cpu, err := c.stopClock()
	if err != nil {
		return W9Result{}, err
	}
	total := cfg.Bytes * int64(cfg.Conns)
	return W9Result{Impl: impl, Bytes: total, Elapsed: elapsed, GBps: float64(total) / elapsed.Seconds() / 1e9, ServerCPU: cpu}, nil
}

func dialAll(addr string, n int) ([]net.Conn, error) {
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		c.Close()
	}
}

// forEach runs f for every connection on a goroutine of its own and
// returns the first error.
func forEach(conns []net.Conn, f func(i int, c net.Conn) error) error {
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = f(i, c); errs[i] != nil {
				c.Close() // unblock nothing else; the run failed
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
