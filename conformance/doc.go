// Package conformance is weft's definition of "works": exported test suites
// that every implementation of a core SPI runs from its own tests.
//
//	func TestConformance(t *testing.T) {
//		conformance.Scheduler(t, func(p core.SchedulerParams) (core.Scheduler, error) {
//			return mysched.New(mysched.DefaultConfig(), p)
//		})
//	}
//
// Each behaviour is a subtest whose name states it. A suite never relies on
// timing for its verdict: where a broken implementation would hang, a
// watchdog shuts the runtime down after a generous limit and fails the
// subtest naming the behaviour, so a hang is a failure, not a stuck CI run.
package conformance
