package metrics_test

import (
	"testing"
	"time"

	"github.com/weftrt/weft/schedulers/internal/metrics"
)

func TestPublishedFiguresAreThoseLastStored(t *testing.T) {
	var p metrics.Published
	c := metrics.Counters{
		Polls: 1, Steals: 2, StolenTasks: 3, Overflows: 4, Parks: 5, Unparks: 6,
		LocalSchedules: 7, LIFOHits: 8, BudgetYields: 9,
	}
	var pt metrics.PollTime
	p.Store(&c, 10, &pt)
	m := p.Snapshot(3)
	if m.Worker != 3 || m.Polls != 1 || m.Steals != 2 || m.StolenTasks != 3 || m.Overflows != 4 ||
		m.Parks != 5 || m.Unparks != 6 || m.LocalSchedules != 7 || m.LIFOHits != 8 ||
		m.BudgetYields != 9 || m.QueueDepth != 10 || m.RemoteSchedules != 0 {
		t.Fatalf("snapshot %+v does not match what was stored", m)
	}
	c.Polls = 100
	if p.Snapshot(3).Polls != 1 {
		t.Fatal("the snapshot follows the counters without a Store")
	}
}

func TestTheMeanPollTimeIsPublishedOnlyOnceMeasured(t *testing.T) {
	var p metrics.Published
	var c metrics.Counters
	var pt metrics.PollTime
	pt.Seed(1000)
	pt.Start(c.Polls)
	pt.End(c.Polls) // no poll: nothing measured
	p.Store(&c, 0, &pt)
	if pt.Mean() != 1000 || p.Snapshot(0).MeanPollNanos != 0 {
		t.Fatalf("a batch without polls moved the mean to %v or published the seed", pt.Mean())
	}
	pt.Start(c.Polls)
	c.Polls += 3
	pt.End(c.Polls)
	p.Store(&c, 0, &pt)
	if got := p.Snapshot(0).MeanPollNanos; got != pt.Mean() {
		t.Fatalf("published mean %v, want %v", got, pt.Mean())
	}
}

func TestTheFirstBatchOfAnUnseededPollTimeIsTakenAsItIs(t *testing.T) {
	var pt metrics.PollTime
	before := time.Now()
	pt.Start(0)
	pt.End(4)
	wall := float64(time.Since(before).Nanoseconds())
	if pt.Mean() < 0 || pt.Mean() > wall/4 {
		t.Fatalf("mean %v ns for 4 polls in %v ns", pt.Mean(), wall)
	}
}

func TestABatchWeighsAsManySinglePolls(t *testing.T) {
	// A seed far above any real poll time: a batch of one poll moves the
	// mean by a tenth of the distance, a batch of 50 polls nearly all the
	// way (1 - 0.9^50 > 0.99).
	const seed = 1e12
	var one, many metrics.PollTime
	one.Seed(seed)
	one.Start(0)
	one.End(1)
	if m := one.Mean(); m > 0.9*seed+1e9 || m < 0.9*seed {
		t.Fatalf("one poll moved the mean to %v, want about 0.9 of the seed", m)
	}
	many.Seed(seed)
	many.Start(0)
	many.End(50)
	if m := many.Mean(); m > 0.01*seed {
		t.Fatalf("50 polls left the mean at %v, want under 1%% of the seed", m)
	}
}
