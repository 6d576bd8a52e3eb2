package mpsc_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type hand = polltest.Hand

func newHand() *hand { return polltest.NewHand() }

// recv polls a receive once.
func recv[T any](h *hand, rx *mpsc.Receiver[T]) (core.Result[T], bool) {
	return polltest.Poll(h, core.Future[core.Result[T]](rx.Recv()))
}

// sendPoll polls a send once.
func sendPoll[T any](h *hand, f *mpsc.SendFuture[T]) (error, bool) {
	return polltest.Poll(h, core.Future[error](f))
}
