package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wfs"
	"github.com/weftrt/weft/runtime/config"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/tools/internal/echo"
)

// The I/O workloads:
//
//	W8    tcp_echo_rr       echo server; 50 connections x n/50 round trips
//	                        of 64 bytes over loopback; round trips/s.
//	W8cpu tcp_echo_rr_cpu   the same run, reporting the server process's
//	                        CPU time per round trip (ns).
//	W9    tcp_stream        8 connections each stream n bytes in 16 KiB
//	                        writes and read the echo back; GB/s.
//	W10   file_random_read  n reads of 4 KiB at random aligned offsets of
//	                        a 256 MiB file, 64 in flight; reads/s.
//
// W8 and W9 run the echo server of tools/internal/echo in a child process (the
// running executable started again, which must call
// echo.ServeChildIfRequested first thing in main), so the server's CPU time
// is what its own getrusage reports and the client, plain Go in this
// process, is the same for both servers. The weft server runs the
// composition under test; the plain-Go server is the same echo loop on
// package net (a goroutine per connection, reading into a buffer and
// writing it back).

// Echo shapes from BENCHMARKS.md.
const (
	echoConns         = 50
	streamConns       = 8
	fileSize          = 256 << 20
	fileReadSize      = 4 << 10
	fileReadsInFlight = 64
)

// echoServer returns the child server settings for comp: every effective
// key of the composition, as a configuration file would write it (lists as
// lists, the rest as text).
func echoServer(comp *config.Composition, buffer int) echo.Server {
	settings := map[string]any{}
	if comp != nil {
		for _, s := range comp.Settings() {
			if v := reflect.ValueOf(s.Value); v.Kind() == reflect.Slice {
				list := make([]any, v.Len())
				for i := range list {
					list[i] = v.Index(i).Interface()
				}
				settings[s.Key] = list
				continue
			}
			settings[s.Key] = s.ValueString()
		}
	}
	return echo.Server{Settings: settings, BufferSize: buffer}
}

func w8Config(comp *config.Composition, n int) echo.W8Config {
	cfg := echo.W8Defaults()
	cfg.Conns = min(echoConns, n)
	cfg.RoundTrips = max(1, n/cfg.Conns)
	cfg.Server = echoServer(comp, cfg.BufferSize)
	return cfg
}

func runW8(impl echo.Impl, comp *config.Composition, n int) (echo.W8Result, error) {
	return echo.RunW8(impl, w8Config(comp, n))
}

func weftEchoRate(comp *config.Composition, n int) (float64, error) {
	r, err := runW8(echo.Weft, comp, n)
	return r.PerSecond, err
}

func goEchoRate(n int) (float64, error) {
	r, err := runW8(echo.Go, nil, n)
	return r.PerSecond, err
}

func weftEchoCPU(comp *config.Composition, n int) (float64, error) {
	r, err := runW8(echo.Weft, comp, n)
	return float64(r.CPUPerRoundTrip.Nanoseconds()), err
}

func goEchoCPU(n int) (float64, error) {
	r, err := runW8(echo.Go, nil, n)
	return float64(r.CPUPerRoundTrip.Nanoseconds()), err
}

func w9Config(comp *config.Composition, n int) echo.W9Config {
	cfg := echo.W9Defaults()
	cfg.Bytes = int64(n)
	cfg.Chunk = min(cfg.Chunk, n)
	cfg.Server = echoServer(comp, cfg.BufferSize)
	return cfg
}

func weftStream(comp *config.Composition, n int) (float64, error) {
	r, err := echo.RunW9(echo.Weft, w9Config(comp, n))
	return r.GBps, err
}

func goStream(n int) (float64, error) {
	r, err := echo.RunW9(echo.Go, w9Config(nil, n))
	return r.GBps, err
}

// The file of W10 is made once per process, outside every timed region,
// and shared by the weft and the plain-Go runs; it lives in the system's
// temporary directory and is removed by RemoveScratch. Its size is
// fileSize, scaled with the number of reads for test-sized runs.
var scratch struct {
	sync.Mutex
	dir  string
	path string
	size int64
}

// scratchFile returns the path and size of a file of at least size bytes
// of pseudo-random data, creating it on first use.
func scratchFile(size int64) (string, int64, error) {
	scratch.Lock()
	defer scratch.Unlock()
	if scratch.path != "" && scratch.size >= size {
		return scratch.path, scratch.size, nil
	}
	if scratch.dir == "" {
		dir, err := os.MkdirTemp("", "weft-bench-")
		if err != nil {
			return "", 0, err
		}
		scratch.dir = dir
	}
	path := filepath.Join(scratch.dir, "file_random_read")
	f, err := os.Create(path)
	if err != nil {
		return "", 0, err
	}
	rng := rand.NewChaCha8([32]byte{'w', 'e', 'f', 't'})
	chunk := make([]byte, 1<<20)
	for written := int64(0); written < size; written += int64(len(chunk)) {
		rng.Read(chunk)
		if _, err := f.Write(chunk[:min(int64(len(chunk)), size-written)]); err != nil {
			f.Close()
			return "", 0, err
		}
	}
	if err := f.Close(); err != nil {
		return "", 0, err
	}
	scratch.path, scratch.size = path, size
	return path, size, nil
}

// RemoveScratch removes the files the I/O workloads created. The weft
// command calls it when the run ends.
func RemoveScratch() {
	scratch.Lock()
	defer scratch.Unlock()
	if scratch.dir != "" {
		os.RemoveAll(scratch.dir)
	}
	scratch.dir, scratch.path, scratch.size = "", "", 0
}

// w10File returns the file for n reads: the specification's 256 MiB at
// full size, less (at least 1 MiB) for a scaled-down run.
func w10File(n int) (string, int64, error) {
	size := int64(fileSize)
	if full := int64(200_000); int64(n) < full {
		size = max(1<<20, size*int64(n)/full) &^ (fileReadSize - 1)
	}
	return scratchFile(size)
}

// randomReader is one of W10's 64 tasks: it reads left blocks of 4 KiB at
// random aligned offsets, one at a time, and adds itself to the counter
// when done.
type randomReader struct {
	f      *wfs.File
	blocks int64
	left   int
	rng    *rand.PCG
	buf    []byte
	read   core.Future[core.Result[int]]
	c      *counter
	errs   *errorBox
}

func (r *randomReader) Poll(cx *core.Context) (core.Unit, bool) {
	for r.left > 0 {
		if r.read == nil {
			off := int64(r.rng.Uint64()%uint64(r.blocks)) * fileReadSize
			r.read = r.f.ReadAt(r.buf, off)
		}
		res, ok := r.read.Poll(cx)
		if !ok {
			return core.Unit{}, false
		}
		r.read = nil
		if res.Err == nil && res.Value != len(r.buf) {
			res.Err = fmt.Errorf("short read: %d bytes", res.Value)
		}
		if res.Err != nil {
			r.errs.set(res.Err)
			break
		}
		r.left--
	}
	r.c.add(cx)
	return core.Unit{}, true
}

// errorBox keeps the first error of a workload's tasks.
type errorBox struct {
	mu  sync.Mutex
	err error
}

func (b *errorBox) set(err error) {
	b.mu.Lock()
	if b.err == nil {
		b.err = err
	}
	b.mu.Unlock()
}

func (b *errorBox) get() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// fileReads is W10's root task: it opens the file, spawns the readers,
// awaits them, and closes the file.
type fileReads struct {
	path   string
	blocks int64
	n      int
	open   core.Future[core.Result[*wfs.File]]
	f      *wfs.File
	c      *counter
	close  core.Future[core.Result[core.Unit]]
	errs   errorBox
	start  time.Time
	took   time.Duration
}

func (w *fileReads) Poll(cx *core.Context) (core.Unit, bool) {
	if w.f == nil {
		if w.open == nil {
			w.open = wfs.Open(w.path)
		}
		res, ok := w.open.Poll(cx)
		if !ok {
			return core.Unit{}, false
		}
		if res.Err != nil {
			w.errs.set(res.Err)
			return core.Unit{}, true
		}
		w.f = res.Value
		readers := min(fileReadsInFlight, w.n)
		w.c = newCounter(readers)
		w.start = time.Now()
		for i := range readers {
			left := w.n / readers
			if i < w.n%readers {
				left++
			}
			core.Spawn(cx, core.Future[core.Unit](&randomReader{
				f: w.f, blocks: w.blocks, left: left, rng: rand.NewPCG(uint64(i), 10),
				buf: make([]byte, fileReadSize), c: w.c, errs: &w.errs,
			}))
		}
	}
	if w.close == nil {
		if _, ok := w.c.Poll(cx); !ok {
			return core.Unit{}, false
		}
		w.took = time.Since(w.start)
		w.close = w.f.Close()
	}
	res, ok := w.close.Poll(cx)
	if ok && res.Err != nil {
		w.errs.set(res.Err)
	}
	return core.Unit{}, ok
}

func weftFileReads(r *rt.Runtime, n int) (float64, error) {
	path, size, err := w10File(n)
	if err != nil {
		return 0, err
	}
	w := &fileReads{path: path, blocks: size / fileReadSize, n: n}
	if _, err := rt.BlockOn(r, core.Future[core.Unit](w)); err != nil {
		return 0, err
	}
	if err := w.errs.get(); err != nil {
		return 0, err
	}
	return float64(n) / w.took.Seconds(), nil
}

func goFileReads(n int) (float64, error) {
	path, size, err := w10File(n)
	if err != nil {
		return 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	blocks := size / fileReadSize
	readers := min(fileReadsInFlight, n)
	var wg sync.WaitGroup
	var errs errorBox
	start := time.Now()
	for i := range readers {
		left := n / readers
		if i < n%readers {
			left++
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.NewPCG(uint64(i), 10)
			buf := make([]byte, fileReadSize)
			for range left {
				off := int64(rng.Uint64()%uint64(blocks)) * fileReadSize
				m, err := f.ReadAt(buf, off)
				if err == nil && m != len(buf) {
					err = errors.New("short read")
				}
				if err != nil {
					errs.set(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	if err := errs.get(); err != nil {
		return 0, err
	}
	return float64(n) / took.Seconds(), nil
}
