package co

// Started returns the number of coroutines started since the process began
// (every one the pool could not reuse).
func Started() int64 { return started.Load() }

// Registered reports whether f holds a context.AfterFunc registration.
func (f *DoneFuture) Registered() bool { return f.stop != nil }
