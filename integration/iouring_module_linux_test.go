//go:build linux

package integration_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/iouring"
	"github.com/weftrt/weft/runtime/rt"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/workstealing"
)

// skipWithoutIOUring skips a test that needs a kernel offering io_uring.
func skipWithoutIOUring(t *testing.T) {
	d, err := iouring.New(iouring.Options{Entries: 8})
	if err != nil {
		t.Skipf("no io_uring here: %v", err)
	}
	d.Close()
}

// Closing a runtime on the io_uring driver, with an accept left pending in
// the ring, leaves no goroutine behind, on one worker and on two.
func TestAnIOUringRuntimeLeavesNoGoroutineAfterClose(t *testing.T) {
	skipWithoutIOUring(t)
	ignore := goleak.IgnoreCurrent()
	for _, sched := range []string{"currentthread", "workstealing"} {
		b := rt.NewBuilder().IgnoreEnv().Scheduler(sched).Driver(iouring.Name).Set("driver.fallback", "error")
		if sched == "workstealing" {
			b.Workers(2)
		}
		r, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		_, err = rt.BlockOn(r, core.PollFunc[int](func(cx *core.Context) (int, bool) {
			d := cx.Worker().Driver().(*iouring.Driver)
			h, _, err := d.Listen("tcp", "127.0.0.1:0", core.SocketOptions{})
			if err == nil {
				d.Accept(h).Poll(cx) // left pending at shutdown
			}
			return 0, true
		}))
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	goleak.VerifyNone(t, ignore)
}
