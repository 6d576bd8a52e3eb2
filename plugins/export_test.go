package plugins

import "log/slog"

// OpenTimerPlugins counts the timer plugin processes still open: after
// every runtime using one has shut down, none (the runtime closes a timer
// that is an io.Closer).
func OpenTimerPlugins() int { return len(liveTimerPlugins()) }

// SetHostTies chooses the ways the plugins this process starts are tied
// to it (the lifeline pipe, the parent-death signal), so a test can check
// each alone.
func SetHostTies(lifeline, deathSignal bool) {
	hostTies.lifeline, hostTies.deathSignal = lifeline, deathSignal
}

// Supervised is a supervisor for tests.
type Supervised struct{ s *supervisor }

// Supervise starts the plugin of lc under a supervisor whose start
// function is open (given the started process's pid).
func Supervise(lc LaunchConfig, p RestartPolicy, open func(pid int) (wait func() error, err error)) (*Supervised, error) {
	s := newSupervisor(&lc, p, slog.Default(), func(p *process) (func() error, error) { return open(p.pid) })
	if err := s.start(); err != nil {
		return nil, err
	}
	return &Supervised{s}, nil
}

// Stop keeps the supervisor from restarting anything.
func (s *Supervised) Stop() { s.s.stop() }

// Wait waits until the supervisor has ended its last process.
func (s *Supervised) Wait() { s.s.wait() }

// Attached reports whether the timer has a session with a plugin process
// (a restarted process serves it only once the host has replayed its
// entries there).
func (t *Timer) Attached() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st != nil
}
