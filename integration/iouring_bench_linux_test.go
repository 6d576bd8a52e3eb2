//go:build linux

package integration_test

import (
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/weftrt/weft/core"
	_ "github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wfs"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"
)

// The benchmarks compare the io_uring driver with the epoll driver (and
// plain Go) in one process: the same coroutine-task program on runtimes
// that differ only in driver.kind.
//
//	cd integration && go test -run '^$' -bench 'EchoRoundTrip|RandomRead4K' -benchtime 20000x .

var compositions = []struct {
	name, sched, driver string
}{
	{"currentthread/epoll", "currentthread", "epoll"},
	{"currentthread/iouring", "currentthread", "iouring"},
	{"workstealing2/epoll", "workstealing", "epoll"},
	{"workstealing2/iouring", "workstealing", "iouring"},
}

func benchRuntime(b *testing.B, sched, driver string) *rt.Runtime {
	bl := rt.NewBuilder().IgnoreEnv().Scheduler(sched).Driver(driver).Timer("none")
	if sched == "workstealing" {
		bl.Workers(2)
	}
	if driver == "iouring" {
		bl.Set("driver.fallback", "error")
	}
	r, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkEchoRoundTrip is one 64-byte round trip over loopback TCP per
// op: a client task writes, an echo task in the same runtime reads and
// writes back, the client reads the echo.
func BenchmarkEchoRoundTrip(b *testing.B) {
	for _, c := range compositions {
		b.Run(c.name, func(b *testing.B) {
			r := benchRuntime(b, c.sched, c.driver)
			defer r.Close()
			err := co.Run(r, func(cx *co.Ctx) error {
				ln, err := wnet.ListenTCP(cx.Context(), "tcp", "127.0.0.1:0")
				if err != nil {
					return err
				}
				defer ln.Close()
				srv := co.Go(cx, func(cx *co.Ctx) error {
					s, err := co.AwaitResult(cx, ln.Accept())
					if err != nil {
						return err
					}
					defer s.Close()
					buf := make([]byte, 64)
					for {
						n, err := co.AwaitResult(cx, s.Read(buf))
						if err != nil {
							return nil
						}
						if _, err := co.AwaitResult(cx, wio.WriteAll(s, buf[:n])); err != nil {
							return err
						}
					}
				})
				cl, err := co.AwaitResult(cx, wnet.DialTCP("tcp", ln.Addr().String()))
				if err != nil {
					return err
				}
				msg, got := make([]byte, 64), make([]byte, 64)
				b.ResetTimer()
				for range b.N {
					if _, err := co.AwaitResult(cx, wio.WriteAll(cl, msg)); err != nil {
						return err
					}
					if _, err := co.AwaitResult(cx, wio.ReadFull(cl, got)); err != nil {
						return err
					}
				}
				b.StopTimer()
				cl.Close()
				co.Await(cx, srv)
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
	b.Run("go", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer ln.Close()
		go func() {
			s, err := ln.Accept()
			if err != nil {
				return
			}
			defer s.Close()
			io.Copy(s, s)
		}()
		cl, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		msg, got := make([]byte, 64), make([]byte, 64)
		b.ResetTimer()
		for range b.N {
			cl.Write(msg)
			io.ReadFull(cl, got)
		}
	})
}

// benchFile is an 8 MiB file of the benchmarks' temporary directory.
const benchFileSize = 8 << 20

func benchFile(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "w10")
	if err := os.WriteFile(path, make([]byte, benchFileSize), 0o600); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRandomRead4K is W10's shape at a small scale: 4 KiB reads at
// random aligned offsets of an 8 MiB file (page cache warm), 64 in
// flight; one op is one read. With epoll the reads go to the runtime's
// blocking pool; with io_uring through the ring.
func BenchmarkRandomRead4K(b *testing.B) {
	const inFlight, block = 64, 4096
	for _, c := range compositions {
		b.Run(c.name, func(b *testing.B) {
			path := benchFile(b)
			r := benchRuntime(b, c.sched, c.driver)
			defer r.Close()
			err := co.Run(r, func(cx *co.Ctx) error {
				f, err := co.AwaitResult(cx, wfs.Open(path))
				if err != nil {
					return err
				}
				defer func() { co.AwaitResult(cx, f.Close()) }()
				b.ResetTimer()
				var hs []*core.JoinHandle[error]
				for i := range inFlight {
					n := b.N / inFlight
					if i < b.N%inFlight {
						n++
					}
					hs = append(hs, co.Go(cx, func(cx *co.Ctx) error {
						rng := rand.New(rand.NewPCG(uint64(i), 7))
						buf := make([]byte, block)
						for range n {
							off := int64(rng.IntN(benchFileSize/block)) * block
							if _, err := co.AwaitResult(cx, f.ReadAt(buf, off)); err != nil {
								return err
							}
						}
						return nil
					}))
				}
				for _, h := range hs {
					if err, jerr := co.AwaitResult(cx, h); jerr != nil || err != nil {
						b.Error(err, jerr)
					}
				}
				b.StopTimer()
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
	b.Run("go", func(b *testing.B) {
		f, err := os.Open(benchFile(b))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		b.ResetTimer()
		var wg sync.WaitGroup
		for i := range inFlight {
			n := b.N / inFlight
			if i < b.N%inFlight {
				n++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 7))
				buf := make([]byte, block)
				for range n {
					f.ReadAt(buf, int64(rng.IntN(benchFileSize/block))*block)
				}
			}()
		}
		wg.Wait()
	})
}
