package currentthread_test

import "runtime"

func gosched() { runtime.Gosched() }
