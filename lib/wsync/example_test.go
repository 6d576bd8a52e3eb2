package wsync_test

import (
	"fmt"
	gosync "sync"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync"
)

// A Mutex is locked by awaiting its Lock future; inside a task that is
// polling it, outside a runtime (as here) future.Wait drives it.
func ExampleMutex() {
	var m wsync.Mutex
	count := 0
	var wg gosync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lock wsync.LockFuture // reused: no allocation per lock
			for j := 0; j < 100; j++ {
				future.Wait[core.Unit](m.LockInto(&lock))
				count++
				m.Unlock()
			}
		}()
	}
	wg.Wait()
	fmt.Println(count)
	// Output: 400
}

// A semaphore hands out permits in FIFO order; a request for several
// permits is served as a unit.
func ExampleSemaphore() {
	s := wsync.NewSemaphore(3)
	fmt.Println(future.Wait[error](s.Acquire(2)), s.Available())
	fmt.Println(s.TryAcquire(2))
	s.Release(2)
	fmt.Println(s.Available())
	s.Close()
	fmt.Println(future.Wait[error](s.Acquire(1)))
	// Output:
	// <nil> 1
	// weft/sync: no permits available
	// 3
	// weft/sync: semaphore closed
}

// NotifyOne with nobody waiting stores one permit for the next waiter.
func ExampleNotify() {
	var n wsync.Notify
	n.NotifyOne()
	n.NotifyOne() // still one permit
	future.Wait[core.Unit](n.Notified())
	_, ready := n.Notified().Poll(core.NewContext(nil))
	fmt.Println(ready)
	// Output: false
}

// GetOrInit runs one initialiser however many tasks ask at once.
func ExampleOnceCell() {
	var cell wsync.OnceCell[string]
	v := future.Wait[string](cell.GetOrInit(func() core.Future[string] {
		return future.Ready("config loaded")
	}))
	fmt.Println(v)
	fmt.Println(cell.Set("again"))
	// Output:
	// config loaded
	// weft/sync: OnceCell already set
}
