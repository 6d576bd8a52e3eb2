package core

import (
	"reflect"
	"unsafe"
)

// Future is an asynchronous computation producing a T.
//
// Poll advances the computation. It returns (value, true) once the result is
// available; otherwise it returns (zero, false) after arranging for
// cx.Waker() to be woken when Poll should be called again. Poll must not
// block the calling goroutine, is called by one goroutine at a time, and is
// never called again after it returned true.
type Future[T any] interface {
	Poll(cx *Context) (T, bool)
}

// Dropper is implemented by futures that hold a resource which must be
// released when the future is abandoned before completion. See the package
// documentation for the contract.
type Dropper interface {
	// Drop releases the future's resources. After Drop returns no waker
	// registered by the future fires on its behalf and the future is never
	// polled again.
	Drop()
}

// Drop calls v.Drop if v implements [Dropper], and does nothing otherwise.
// Combinators call it on every future they abandon. A nil pointer is
// nothing to drop: Drop of a typed nil (an optional future field that was
// never set, held in an interface) does nothing, whatever its type's Drop
// method would do with a nil receiver.
func Drop(v any) {
	d, ok := v.(Dropper)
	if !ok {
		return
	}
	// The data word of an interface holding a pointer is the pointer
	// itself, so a nil word is the cheap sign of a typed nil; reflect
	// confirms the kind, because other pointer-shaped values (a struct
	// whose one field is a nil pointer) have a nil word too and are
	// values with a Drop of their own.
	if (*[2]unsafe.Pointer)(unsafe.Pointer(&d))[1] == nil && reflect.ValueOf(d).Kind() == reflect.Pointer {
		return
	}
	d.Drop()
}

// PollFunc adapts a function to the [Future] interface. The function follows
// the Poll contract.
type PollFunc[T any] func(cx *Context) (T, bool)

// Poll calls f(cx).
func (f PollFunc[T]) Poll(cx *Context) (T, bool) { return f(cx) }

// Unit is the value of futures that produce nothing but completion.
type Unit = struct{}
