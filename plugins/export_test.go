package plugins

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
