package wsync_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// hand polls futures by hand, as one task would.
type hand = polltest.Hand

func newHand() *hand { return polltest.NewHand() }

func poll[T any](h *hand, f core.Future[T]) (T, bool) { return polltest.Poll(h, f) }

type waker = polltest.Waker

var (
	workerContext = polltest.WorkerContext
	budgetContext = polltest.BudgetContext
)
