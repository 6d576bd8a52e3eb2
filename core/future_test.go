package core

import "testing"

// countingDropper counts its Drop calls; its Drop dereferences the
// receiver, as most futures' Drop methods do.
type countingDropper struct{ drops int }

func (d *countingDropper) Drop() { d.drops++ }

// valueDropper has a Drop method on a value receiver.
type valueDropper struct{ p *int }

func (d valueDropper) Drop() {
	if d.p != nil {
		*d.p++
	}
}

// wantNoPanic runs f and reports, without stopping the test, a panic out
// of it; what names the call.
func wantNoPanic(t *testing.T, what string, f func()) {
	t.Helper()
	if r := panicOf(f); r != nil {
		t.Errorf("%s panicked with %v, want no panic", what, r)
	}
}

// panicOf runs f and returns what it panicked with, or nil.
func panicOf(f func()) (r any) {
	defer func() { r = recover() }()
	f()
	return nil
}

func TestDropOfATypedNilPointerDoesNothing(t *testing.T) {
	var d *countingDropper
	wantNoPanic(t, "Drop of a nil *countingDropper", func() { Drop(d) })
	var f Future[Unit] = (*yieldFuture)(nil)
	wantNoPanic(t, "Drop of a nil *yieldFuture in a Future", func() { Drop(f) })
}

func TestDropCallsDropOnEveryOtherDropper(t *testing.T) {
	d := &countingDropper{}
	Drop(d)
	if d.drops != 1 {
		t.Errorf("Drop of a pointer dropper ran its Drop %d times, want 1", d.drops)
	}

	n := 0
	Drop(valueDropper{p: &n})
	if n != 1 {
		t.Errorf("Drop of a value dropper ran its Drop %d times, want 1", n)
	}
	// A value whose only field is a nil pointer is still a value: its
	// Drop runs.
	wantNoPanic(t, "Drop of a zero valueDropper", func() { Drop(valueDropper{}) })

	Drop(nil)
	Drop(42)
}

func BenchmarkDrop(b *testing.B) {
	d := &countingDropper{}
	var v any = d
	for b.Loop() {
		Drop(v)
	}
}
