package plugins

// OpenTimerPlugins counts the timer plugin processes still open: after
// every runtime using one has shut down, none (the runtime closes a timer
// that is an io.Closer).
func OpenTimerPlugins() int { return len(liveTimerPlugins()) }
