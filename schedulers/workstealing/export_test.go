package workstealing

import "github.com/weftrt/weft/schedulers/internal/park"

// HolderParkedOffDriver reports whether every worker is parked and the
// driver slot's holder is parked on its channel, off a quiescent driver.
// Tests wait for it to set up the race the activation hook closes.
func (s *Scheduler) HolderParkedOffDriver() bool {
	unparked, _ := s.idle.counts()
	h := s.drv.holder.Load()
	return unparked == 0 && h >= 0 && s.workers[h].parker.State() == park.ParkedOffDriver
}
