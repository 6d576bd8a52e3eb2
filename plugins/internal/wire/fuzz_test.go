package wire

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/weftrt/weft/core"
)

// FuzzDec reads a hostile frame with a sequence of reads the fuzzer also
// chooses. No read panics; the offset never passes the frame's end nor goes
// back; a string aliases the frame and a count never exceeds the bytes
// left; the first error sticks, names what was read and where, and
// matches ErrMalformed; every read after it returns a zero value.
func FuzzDec(f *testing.F) {
	var e Enc
	e.U8(OpListen)
	e.Uint(1)
	e.String("tcp")
	e.String("127.0.0.1:0")
	e.PutOpts(coreOpts)
	e.PutError(DriverClosedErr)
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, e.B)
	f.Add([]byte{3, 3, 3}, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40})
	f.Add([]byte{7}, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, script, frame []byte) {
		d := NewDec(frame)
		var first error
		for _, op := range script {
			before := d.Offset()
			failed := d.Err() != nil
			var zero bool // the read returned its zero value
			switch op % 13 {
			case 0:
				zero = d.U8() == 0
			case 1:
				zero = d.Uint() == 0
			case 2:
				zero = d.Int() == 0
			case 3:
				left := d.Remaining()
				n := d.Len()
				if n > left {
					t.Fatalf("a length of %d with %d bytes left", n, left)
				}
				zero = n == 0
			case 4:
				p := d.Bytes()
				if len(p) > 0 && &p[0] != &frame[d.Offset()-len(p)] {
					t.Fatal("the bytes do not alias the frame")
				}
				zero = len(p) == 0
			case 5:
				zero = d.String() == ""
			case 6:
				zero = !d.Bool()
			case 7:
				left := d.Remaining()
				n := d.Count("items", math.MaxInt)
				if n > left {
					t.Fatalf("a count of %d with %d bytes left", n, left)
				}
				zero = n == 0
			case 8:
				zero = d.UintMax("a value", 1<<20) == 0
			case 9:
				err := d.Error()
				if err == nil {
					t.Fatal("an error decoded as nil")
				}
				zero = true
			case 10:
				a := d.Addr()
				zero = a.Net == "" && a.Addr == ""
			case 11:
				zero = d.Opts() == core.SocketOptions{}
			case 12:
				d.Failf("op %d", op)
				zero = true
			}
			if d.Offset() < before || d.Offset() > len(frame) {
				t.Fatalf("the offset moved from %d to %d in a %d-byte frame", before, d.Offset(), len(frame))
			}
			if failed {
				if d.Err() != first {
					t.Fatalf("the first error %v was replaced by %v", first, d.Err())
				}
				if !zero {
					t.Fatalf("read %d after an error returned a value", op%13)
				}
			}
			if err := d.Err(); err != nil && first == nil {
				first = err
				if !errors.Is(err, ErrMalformed) {
					t.Fatalf("%v does not match ErrMalformed", err)
				}
				if !strings.Contains(err.Error(), "byte ") {
					t.Fatalf("%q does not say where", err)
				}
			}
		}
		if d.More() && d.Err() != nil {
			t.Fatal("More after an error")
		}
	})
}

// FuzzDecodeInfo decodes a hostile description of a plugin: it never
// panics, and what it accepts is a known kind, a printable name and
// capabilities within their limits, a protocol and a pid above 0.
func FuzzDecodeInfo(f *testing.F) {
	f.Add([]byte(`{"kind":"driver","name":"epoll","protocol":1,"capabilities":["vectored","datagram"],"pid":42}`))
	f.Add([]byte(`{"kind":"timer","name":"wheel","protocol":1,"pid":7}`))
	f.Add([]byte(`{"kind":"scheduler","name":"priority","protocol":2,"pid":1,"capabilities":null}`))
	f.Add([]byte(`{"kind":"printer","name":"\u0000","protocol":-1,"pid":0}`))
	f.Add([]byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		info, err := DecodeInfo(b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty error")
			}
			return
		}
		if info.Kind != KindDriver && info.Kind != KindTimer && info.Kind != KindScheduler {
			t.Fatalf("accepted kind %q", info.Kind)
		}
		if info.Protocol < 1 || info.PID < 1 {
			t.Fatalf("accepted protocol %d, pid %d", info.Protocol, info.PID)
		}
		if len(info.Capabilities) > MaxInfoCapabilities {
			t.Fatalf("accepted %d capabilities", len(info.Capabilities))
		}
		for _, s := range append([]string{info.Name}, info.Capabilities...) {
			if s == "" || len(s) > MaxInfoName || !utf8.ValidString(s) || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
				t.Fatalf("accepted the label %q", s)
			}
		}
	})
}

// coreOpts are socket options that differ from the zero value.
var coreOpts = core.SocketOptions{ReuseAddr: true, ReusePort: true, Backlog: 9}
