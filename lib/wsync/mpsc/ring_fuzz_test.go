package mpsc

import "testing"

// FuzzRingMatchesASlice drives the ring buffer with pushes, pops and batch
// pops decoded from the input and checks every result, and the length,
// against a plain slice.
func FuzzRingMatchesASlice(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 2, 3, 1, 1, 1}, false)
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 9, 0, 0, 1}, true)
	f.Fuzz(func(t *testing.T, ops []byte, shrink bool) {
		var r ring[int]
		r.shrink = shrink
		var model []int
		next := 0
		for i := 0; i < len(ops); i++ {
			switch ops[i] % 4 {
			case 0, 3: // push, twice as likely so the ring grows
				n := 1
				if ops[i] == 3 && i+1 < len(ops) {
					i++
					n = int(ops[i]) * 8 // a burst, to cross shrinkAbove
				}
				for k := 0; k < n; k++ {
					r.push(next)
					model = append(model, next)
					next++
				}
			case 1:
				v, ok := r.pop()
				if ok != (len(model) > 0) {
					t.Fatalf("pop ok=%v with %d queued", ok, len(model))
				}
				if ok {
					if v != model[0] {
						t.Fatalf("pop = %d, want %d", v, model[0])
					}
					model = model[1:]
				}
			case 2:
				limit := 0
				if i+1 < len(ops) {
					i++
					limit = int(ops[i])
				}
				got, k := r.popInto(nil, limit)
				want := min(limit, len(model))
				if k != want || len(got) != want {
					t.Fatalf("popInto(%d) moved %d (%d), want %d", limit, k, len(got), want)
				}
				for j := range got {
					if got[j] != model[j] {
						t.Fatalf("popInto[%d] = %d, want %d", j, got[j], model[j])
					}
				}
				model = model[want:]
			}
			if r.len() != len(model) {
				t.Fatalf("len = %d, want %d", r.len(), len(model))
			}
			if len(r.buf)&(len(r.buf)-1) != 0 {
				t.Fatalf("buffer size %d is not a power of two", len(r.buf))
			}
		}
		// Drain, checking order, and check no slot still holds a value.
		for _, want := range model {
			v, ok := r.pop()
			if !ok || v != want {
				t.Fatalf("drain: pop = %d, %v, want %d", v, ok, want)
			}
		}
		for i, v := range r.buf {
			if v != 0 {
				t.Fatalf("slot %d still holds %d after the ring drained", i, v)
			}
		}
	})
}
