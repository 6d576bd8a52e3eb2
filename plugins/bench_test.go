package plugins_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	_ "github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/rt"
)

// W8-style echo: conns plain-Go clients each do request/response round
// trips of 64 bytes against an echo server running on a weft runtime whose
// driver is the epoll driver in process or out of process. Reported:
// round trips per second and, for the plugin, driver operations and gRPC
// messages per echoed message.
//
//	go test -run '^$' -bench Echo -benchtime 20000x ./plugins
func BenchmarkEchoInProcessEpoll(b *testing.B) {
	benchEcho(b, func(bl *rt.Builder) { bl.Driver("epoll") })
}

func BenchmarkEchoOutOfProcessEpollPlugin(b *testing.B) {
	benchEcho(b, func(bl *rt.Builder) {
		bl.Driver("plugin").Set("driver.path", epollBin).Set("driver.sha256", epollSum)
	})
}

func benchEcho(b *testing.B, configure func(*rt.Builder)) {
	const conns, size = 16, 64
	bl := rt.NewBuilder().IgnoreEnv().Scheduler("currentthread").Timer("wheel")
	configure(bl)
	r, err := bl.Build()
	require.NoError(b, err)
	defer r.Close()

	addrCh := make(chan string, 1)
	var drv core.Driver
	server := task(func(c *co) error {
		drv = c.cx.Worker().Driver()
		ln, err := wnet.ListenTCP(c.cx, "tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		addrCh <- ln.Addr().String()
		for {
			s, err := awaitR(c, ln.Accept())
			if err != nil {
				return err
			}
			core.Spawn(c.cx, task(func(c *co) error {
				defer s.Close()
				buf := make([]byte, 4096)
				for {
					n, err := awaitR(c, s.Read(buf))
					if err != nil {
						return nil
					}
					if _, err := awaitR(c, wio.WriteAll(s, buf[:n])); err != nil {
						return nil
					}
				}
			}))
		}
	})
	go rt.BlockOn(r, server)
	addr := <-addrCh

	clients := make([]net.Conn, conns)
	for i := range clients {
		clients[i], err = net.Dial("tcp", addr)
		require.NoError(b, err)
		defer clients[i].Close()
	}
	var before plugins.Stats
	if pd, ok := drv.(*plugins.Driver); ok {
		before = pd.Stats()
	}
	per := b.N/conns + 1
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			msg := make([]byte, size)
			got := make([]byte, size)
			for range per {
				if _, err := cl.Write(msg); err != nil {
					return
				}
				if _, err := io.ReadFull(cl, got); err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	total := per * conns
	b.ReportMetric(float64(total)/elapsed.Seconds(), "rt/s")
	if pd, ok := drv.(*plugins.Driver); ok {
		st := pd.Stats()
		ops := st.Ops - before.Ops
		b.ReportMetric(float64(ops)/float64(total), "ops/msg")
		b.ReportMetric(float64(st.Sent-before.Sent+st.Received-before.Received)/float64(total), "grpcmsgs/msg")
	}
}
