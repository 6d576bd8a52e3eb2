package plugins

import (
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/weftrt/weft/core"
)

// RestartPolicy says what happens after a plugin process exits without
// being asked to: it is started again after a delay that doubles with
// each consecutive crash, from Backoff up to MaxBackoff, and returns to
// Backoff once a process has run for ResetAfter.
type RestartPolicy struct {
	// Disabled leaves a crashed plugin down: its module fails every
	// operation with ErrPluginUnavailable from then on.
	Disabled bool
	// Max is the number of restarts allowed over the module's life; 0
	// means no limit.
	Max int
	// Backoff is the first delay (100 ms by default); MaxBackoff caps it
	// (10 s by default); ResetAfter is the run time that counts as stable
	// (1 min by default).
	Backoff, MaxBackoff, ResetAfter time.Duration
}

func (p RestartPolicy) withDefaults() RestartPolicy {
	if p.Backoff <= 0 {
		p.Backoff = 100 * time.Millisecond
	}
	if p.MaxBackoff < p.Backoff {
		p.MaxBackoff = max(10*time.Second, p.Backoff)
	}
	if p.ResetAfter <= 0 {
		p.ResetAfter = time.Minute
	}
	return p
}

// supervisor starts a plugin's process, notices its exit and restarts it
// per policy. The module supplies start, which opens a session on a fresh
// process and returns a function that waits for that session's end.
type supervisor struct {
	lc     *LaunchConfig
	policy RestartPolicy
	log    *slog.Logger
	open   func(*process) (wait func() error, err error)

	mu       sync.Mutex
	proc     *process
	count    int
	gaveUp   bool
	stopped  bool
	stopCh   chan struct{}
	done     chan struct{}
	lastFail error
}

func newSupervisor(lc *LaunchConfig, p RestartPolicy, log *slog.Logger, open func(*process) (func() error, error)) *supervisor {
	return &supervisor{
		lc:     lc,
		policy: p.withDefaults(),
		log:    log.With("plugin", lc.name()),
		open:   open,
		stopCh: make(chan struct{}),
		done:   make(chan struct{}),
	}
}

// start launches the first process synchronously, so a module that cannot
// start fails its construction, then supervises it.
func (s *supervisor) start() error {
	p, err := launch(s.lc)
	if err != nil {
		return err
	}
	wait, err := s.open(p)
	if err != nil {
		p.kill()
		return err
	}
	s.proc = p
	track(s, core.Kind(s.lc.Kind))
	s.log.Debug("plugin started", "pid", p.pid, "kind", p.info.Kind, "module", p.info.Name, "protocol", p.info.Protocol)
	go s.run(wait)
	return nil
}

func (s *supervisor) run(wait func() error) {
	defer close(s.done)
	defer untrack(s)
	delay := s.policy.Backoff
	for {
		began := time.Now()
		err := wait()
		s.mu.Lock()
		p := s.proc
		s.proc = nil
		stopped := s.stopped
		s.mu.Unlock()
		p.kill()
		if stopped {
			return
		}
		s.log.Error("plugin process exited unexpectedly", "pid", p.pid, "error", err)
		if time.Since(began) >= s.policy.ResetAfter {
			delay = s.policy.Backoff
		}
		for {
			s.mu.Lock()
			if s.policy.Disabled || (s.policy.Max > 0 && s.count >= s.policy.Max) {
				s.gaveUp = true
				s.mu.Unlock()
				s.log.Error("plugin will not be restarted", "restarts", s.count, "disabled", s.policy.Disabled)
				return
			}
			s.count++
			s.mu.Unlock()
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.stopCh:
				t.Stop()
				return
			}
			delay = min(2*delay, s.policy.MaxBackoff)
			p, err := launch(s.lc)
			if err != nil {
				s.log.Error("restarting the plugin failed", "error", err)
				s.mu.Lock()
				s.lastFail = err
				s.mu.Unlock()
				continue
			}
			w, err := s.open(p)
			if err != nil {
				p.kill()
				if s.isStopped() {
					return
				}
				s.log.Error("restarting the plugin failed", "error", err)
				continue
			}
			s.mu.Lock()
			if s.stopped {
				// Stopped while the process started: the owner did
				// not see this session, and nobody else ends it.
				s.mu.Unlock()
				p.kill()
				return
			}
			s.proc = p
			s.mu.Unlock()
			s.log.Info("plugin restarted", "pid", p.pid, "restarts", s.restarts())
			wait = w
			break
		}
	}
}

func (s *supervisor) isStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

func (s *supervisor) restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// state describes the supervised plugin for listings.
func (s *supervisor) state() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.stopped:
		return "stopped"
	case s.proc != nil:
		return "running"
	case s.gaveUp:
		return "failed"
	}
	return "restarting"
}

// stop keeps the supervisor from restarting anything; the owner then ends
// the session, and wait returns once the process is gone.
func (s *supervisor) stop() {
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.stopCh)
	}
	s.mu.Unlock()
}

// wait waits until the supervisor has killed its last process.
func (s *supervisor) wait() { <-s.done }

func findProcess(pid int) (*os.Process, error) { return os.FindProcess(pid) }
