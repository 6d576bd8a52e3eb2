//go:build race

package currentthread_test

// stressTasks is smaller under the race detector, which slows every
// atomic operation by an order of magnitude; the interleavings it checks
// are the same.
const stressTasks = 200_000
