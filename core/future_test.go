package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

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

func TestDropOfATypedNilPointerDoesNothing(t *testing.T) {
	var d *countingDropper
	assert.NotPanics(t, func() { Drop(d) })
	var f Future[Unit] = (*yieldFuture)(nil)
	assert.NotPanics(t, func() { Drop(f) })
}

func TestDropCallsDropOnEveryOtherDropper(t *testing.T) {
	d := &countingDropper{}
	Drop(d)
	assert.Equal(t, 1, d.drops)

	n := 0
	Drop(valueDropper{p: &n})
	assert.Equal(t, 1, n)
	// A value whose only field is a nil pointer is still a value: its
	// Drop runs.
	assert.NotPanics(t, func() { Drop(valueDropper{}) })

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
