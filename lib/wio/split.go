package wio

import "github.com/weftrt/weft/core"

// Split returns a read half and a write half of rw, to hand to two tasks.
// Because weft's I/O operations carry their own waiters, a stream needs no
// lock to be read by one task while another writes to it, so the halves
// are plain views of rw: they only restrict each holder to its direction.
// rw must allow a Read and a Write in flight at once, as every weft stream
// and Duplex do.
func Split(rw ReadWriter) (*ReadHalf, *WriteHalf) {
	return &ReadHalf{rw: rw}, &WriteHalf{rw: rw}
}

// ReadHalf is the reading view of a split stream.
type ReadHalf struct{ rw ReadWriter }

// Read reads from the stream; see Reader.
func (h *ReadHalf) Read(p []byte) core.Future[core.Result[int]] { return h.rw.Read(p) }

// WriteHalf is the writing view of a split stream.
type WriteHalf struct{ rw ReadWriter }

// Write writes to the stream; see Writer.
func (h *WriteHalf) Write(p []byte) core.Future[core.Result[int]] { return h.rw.Write(p) }

// CloseWrite shuts down the stream's write side, if the stream supports
// it; it does nothing otherwise.
func (h *WriteHalf) CloseWrite() error {
	if cw, ok := h.rw.(CloseWriter); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Unsplit returns the stream the halves view. It panics if they are not
// halves of the same stream.
func Unsplit(r *ReadHalf, w *WriteHalf) ReadWriter {
	if r.rw != w.rw {
		panic("weft/io: Unsplit of halves of different streams")
	}
	return r.rw
}
