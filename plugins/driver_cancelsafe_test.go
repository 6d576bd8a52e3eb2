package plugins_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wio"
	"github.com/weftrt/weft/lib/wnet"
)

type wakeCount struct{ n atomic.Int64 }

func (w *wakeCount) Wake() { w.n.Add(1) }

// Two reads wait in the plugin on one stream; bytes arrive and the plugin
// gives them to the first, which is dropped once its completion has
// reached the host. The bytes are the second read's: it must not go on
// waiting in the plugin for more while they are kept.
func TestAReadWaitingInThePluginTakesBytesADroppedReadReceived(t *testing.T) {
	r := pluginRuntime(t, "currentthread")
	defer r.Close()
	err := run(t, r, 30*time.Second, func(c *co) error {
		ln, err := wnet.ListenTCP(c.cx, "tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		client, err := awaitR(c, wnet.DialTCP("tcp", ln.Addr().String()))
		if err != nil {
			return err
		}
		defer client.Close()
		server, err := awaitR(c, ln.Accept())
		if err != nil {
			return err
		}
		defer server.Close()
		woke := &wakeCount{}
		sub := c.cx.WithWaker(woke)
		first := server.Read(make([]byte, 8))
		if _, ok := first.Poll(&sub); ok {
			return errors.New("a read with nothing to read resolved")
		}
		buf := make([]byte, 8)
		second := server.Read(buf)
		if _, ok := second.Poll(c.cx); ok {
			return errors.New("a second read with nothing to read resolved")
		}
		if _, err := awaitR(c, wio.WriteAll(client, []byte("once"))); err != nil {
			return err
		}
		// Wait until one of the two has its completion.
		for woke.n.Load() == 0 {
			if res, ok := second.Poll(c.cx); ok {
				// The plugin gave the bytes to the second read: nothing
				// to keep, and that is right too.
				if res.Err != nil || string(buf[:res.Value]) != "once" {
					return errors.New("the second read did not get the bytes")
				}
				core.Drop(first)
				return nil
			}
			await(c, core.Yield())
		}
		core.Drop(first)
		n, err := awaitR(c, second)
		if err != nil {
			return err
		}
		if string(buf[:n]) != "once" {
			return errors.New("the second read got " + string(buf[:n]) + ", want the bytes the dropped read received")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
