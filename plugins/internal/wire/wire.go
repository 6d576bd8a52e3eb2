// Package wire is the protocol between a weft host and its module plugins:
// the go-plugin handshake values, the gRPC services (declared by hand with
// grpc.ServiceDesc, since the build has no protoc), and the compact binary
// frames those services carry.
//
// # Why frames inside BytesValue
//
// Each gRPC message is a google.protobuf.BytesValue whose bytes are one of
// our frames: a run of records encoded with unsigned varints and
// length-prefixed byte strings. Using an existing, registered protobuf type
// keeps gRPC's default "proto" codec for every service on the connection
// (go-plugin's broker, controller, stdio and health services rely on it), so
// no codec is forced on anyone, while our records stay free of protobuf's
// per-field tags and allocations: one message carries a whole batch of
// operations, and a batch is decoded in place without a generated type per
// operation. The cost is a version number of our own (ProtocolVersion),
// negotiated by go-plugin's VersionedPlugins.
package wire

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The go-plugin handshake. The cookie is not a secret: it only keeps a
// plugin binary from doing anything when a user runs it by hand, and a host
// from talking to a binary that is not a weft plugin.
const (
	MagicCookieKey   = "WEFT_PLUGIN_COOKIE"
	MagicCookieValue = "weft-module-plugin-7c1e0b5a"
)

// ProtocolVersion is the version of the frames and services below. go-plugin
// negotiates it: the host offers the versions it speaks, the plugin picks
// the highest one it also speaks, and a plugin with none in common fails the
// handshake.
const ProtocolVersion = 1

// PluginName is the key of the single entry in the go-plugin plugin sets of
// both sides.
const PluginName = "weft"

// Module kinds a plugin may serve.
const (
	KindDriver    = "driver"
	KindTimer     = "timer"
	KindScheduler = "scheduler"
)

// Info describes a plugin binary; the Module service returns it as JSON.
type Info struct {
	// Kind is KindDriver, KindTimer or KindScheduler.
	Kind string `json:"kind"`
	// Name is what the plugin calls its module ("epoll").
	Name string `json:"name"`
	// Protocol is the wire protocol version the plugin speaks on this
	// connection (equal to the negotiated go-plugin version).
	Protocol int `json:"protocol"`
	// Capabilities lists optional features ("vectored", "datagram").
	Capabilities []string `json:"capabilities,omitempty"`
	// PID is the plugin process's id.
	PID int `json:"pid"`
}

// ---------------------------------------------------------------------------
// gRPC services, declared by hand.

// ModuleServer is served by every plugin: it describes the binary.
type ModuleServer interface {
	Info() Info
}

// ModuleServiceName is the full name of the module service.
const ModuleServiceName = "weft.plugins.v1.Module"

// ModuleDesc is the module service: one unary method, Info.
var ModuleDesc = grpc.ServiceDesc{
	ServiceName: ModuleServiceName,
	HandlerType: (*ModuleServer)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Info",
		Handler: func(srv any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			var in wrapperspb.BytesValue
			if err := dec(&in); err != nil {
				return nil, err
			}
			b, err := json.Marshal(srv.(ModuleServer).Info())
			if err != nil {
				return nil, err
			}
			return wrapperspb.Bytes(b), nil
		},
	}},
	Metadata: "weft/plugins/wire",
}

// CallInfo calls the module service's Info method on conn.
func CallInfo(ctx context.Context, conn grpc.ClientConnInterface) (Info, error) {
	var out wrapperspb.BytesValue
	if err := conn.Invoke(ctx, "/"+ModuleServiceName+"/Info", wrapperspb.Bytes(nil), &out); err != nil {
		return Info{}, err
	}
	return DecodeInfo(out.Value)
}

// Limits of an Info a plugin sends.
const (
	MaxInfoName         = 256 // bytes of the module's name
	MaxInfoCapabilities = 64  // capabilities listed
	MaxInfoCapability   = 64  // bytes of one capability
)

// DecodeInfo decodes and checks the JSON description a plugin sends: a
// known kind, a name (printable, at most MaxInfoName bytes), a protocol
// version and a process id above 0, and at most MaxInfoCapabilities
// capabilities (printable, at most MaxInfoCapability bytes each). The
// error says which field is wrong and why.
func DecodeInfo(b []byte) (Info, error) {
	var info Info
	if err := json.Unmarshal(b, &info); err != nil {
		return Info{}, fmt.Errorf("decoding the plugin's Info: %w", err)
	}
	bad := func(format string, args ...any) (Info, error) {
		return Info{}, fmt.Errorf("the plugin's Info is invalid: "+format, args...)
	}
	switch info.Kind {
	case KindDriver, KindTimer, KindScheduler:
	default:
		return bad("kind %q is none of %q, %q, %q", clip(info.Kind), KindDriver, KindTimer, KindScheduler)
	}
	if err := checkLabel(info.Name, MaxInfoName); err != nil {
		return bad("name: %v", err)
	}
	if info.Protocol < 1 {
		return bad("protocol %d, want >= 1", info.Protocol)
	}
	if info.PID < 1 {
		return bad("pid %d, want >= 1", info.PID)
	}
	if len(info.Capabilities) > MaxInfoCapabilities {
		return bad("%d capabilities, above the limit %d", len(info.Capabilities), MaxInfoCapabilities)
	}
	for i, c := range info.Capabilities {
		if err := checkLabel(c, MaxInfoCapability); err != nil {
			return bad("capabilities[%d]: %v", i, err)
		}
	}
	return info, nil
}

// checkLabel checks a name the host logs: not empty, at most max bytes,
// valid UTF-8 without control characters.
func checkLabel(s string, max int) error {
	switch {
	case s == "":
		return errors.New("empty")
	case len(s) > max:
		return fmt.Errorf("%d bytes, above the limit %d", len(s), max)
	case !utf8.ValidString(s):
		return fmt.Errorf("%q is not valid UTF-8", clip(s))
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%q holds the unprintable character %U", clip(s), r)
		}
	}
	return nil
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// SessionServer serves a bidirectional session stream: the driver, timer
// and scheduler services each have one.
type SessionServer interface {
	Session(stream grpc.ServerStream) error
}

// SessionDesc returns the service description of a session service named
// name ("weft.plugins.v1.Driver"): one bidirectional stream, Session, whose
// messages in both directions are BytesValue frames.
func SessionDesc(name string) *grpc.ServiceDesc {
	return &grpc.ServiceDesc{
		ServiceName: name,
		HandlerType: (*SessionServer)(nil),
		Streams: []grpc.StreamDesc{{
			StreamName: "Session",
			Handler: func(srv any, stream grpc.ServerStream) error {
				return srv.(SessionServer).Session(stream)
			},
			ServerStreams: true,
			ClientStreams: true,
		}},
		Metadata: "weft/plugins/wire",
	}
}

// Service names of the session services.
const (
	DriverServiceName    = "weft.plugins.v1.Driver"
	TimerServiceName     = "weft.plugins.v1.Timer"
	SchedulerServiceName = "weft.plugins.v1.Scheduler"
)

// OpenSession opens the Session stream of service name on conn.
func OpenSession(ctx context.Context, conn grpc.ClientConnInterface, name string) (grpc.ClientStream, error) {
	desc := SessionDesc(name)
	return conn.NewStream(ctx, &desc.Streams[0], "/"+name+"/Session")
}

// Reject is how a plugin ends a session whose frames it cannot parse: a
// gRPC status InvalidArgument saying what was wrong. The host recognises
// it with Rejected and treats the session as failed, as it does a frame
// of the plugin's that it cannot parse itself.
func Reject(err error) error {
	return status.Errorf(codes.InvalidArgument, "protocol error: the plugin rejected the host's frame: %v", err)
}

// Rejected reports whether err is a plugin's Reject.
func Rejected(err error) bool { return status.Code(err) == codes.InvalidArgument }

// MaxMessage is the largest frame either side accepts. The host bounds the
// bytes in flight well below it (see the driver's window), so a frame never
// comes near it in practice.
const MaxMessage = 256 << 20

// ---------------------------------------------------------------------------
// Encoding.

// Enc appends records to a frame.
type Enc struct{ B []byte }

// U8 appends one byte.
func (e *Enc) U8(v byte) { e.B = append(e.B, v) }

// Uint appends an unsigned varint.
func (e *Enc) Uint(v uint64) { e.B = binary.AppendUvarint(e.B, v) }

// Int appends a signed (zig-zag) varint.
func (e *Enc) Int(v int64) { e.B = binary.AppendVarint(e.B, v) }

// Bytes appends a length-prefixed byte string. This is the one copy a
// buffer makes on its way into a frame.
func (e *Enc) Bytes(p []byte) {
	e.Uint(uint64(len(p)))
	e.B = append(e.B, p...)
}

// BytesN appends the length prefix for n bytes and returns the n-byte
// region to fill, so a caller can gather several buffers without an
// intermediate one.
func (e *Enc) BytesN(n int) []byte {
	e.Uint(uint64(n))
	start := len(e.B)
	e.B = append(e.B, make([]byte, n)...)
	return e.B[start:]
}

// String appends a length-prefixed string.
func (e *Enc) String(s string) {
	e.Uint(uint64(len(s)))
	e.B = append(e.B, s...)
}

// Bool appends a boolean as one byte.
func (e *Enc) Bool(v bool) {
	if v {
		e.U8(1)
	} else {
		e.U8(0)
	}
}

// ErrMalformed is matched (errors.Is) by every error of decoding a frame:
// a record that ends early, a count or length beyond what the frame holds
// or the protocol allows, a code the protocol does not define.
var ErrMalformed = errors.New("weft plugin wire: malformed frame")

// ErrShortFrame is matched by the error of a frame that ends inside a
// record (it matches ErrMalformed too).
var ErrShortFrame = fmt.Errorf("%w: truncated", ErrMalformed)

// Dec reads records from a frame. Its first error sticks: later reads return
// zero values, and Err reports it. Every error names what was being read,
// where, and why it failed, and matches ErrMalformed.
//
// No read allocates more than the frame holds: a length or a count is
// checked against the unread bytes before anything is made of it, so a
// hostile prefix of 2^62 fails at once.
type Dec struct {
	B   []byte
	off int
	err error
}

// NewDec returns a decoder over frame b.
func NewDec(b []byte) *Dec { return &Dec{B: b} }

// More reports whether unread bytes remain and no error occurred.
func (d *Dec) More() bool { return d.err == nil && d.off < len(d.B) }

// Err returns the first decoding error.
func (d *Dec) Err() error { return d.err }

// Remaining returns the number of unread bytes.
func (d *Dec) Remaining() int { return len(d.B) - d.off }

// Offset returns the position of the next read in the frame.
func (d *Dec) Offset() int { return d.off }

// short records a truncation while reading what.
func (d *Dec) short(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s at byte %d of a %d-byte frame", ErrShortFrame, what, d.off, len(d.B))
	}
	d.off = len(d.B)
}

// Failf records a malformed value found by the caller: the message says
// what was wrong, and the error names the position and matches
// ErrMalformed. Later reads return zero values.
func (d *Dec) Failf(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s (before byte %d of a %d-byte frame)", ErrMalformed, fmt.Sprintf(format, args...), d.off, len(d.B))
	}
	d.off = len(d.B)
}

// U8 reads one byte.
func (d *Dec) U8() byte {
	if d.off >= len(d.B) {
		d.short("a byte")
		return 0
	}
	v := d.B[d.off]
	d.off++
	return v
}

// Uint reads an unsigned varint.
func (d *Dec) Uint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.B[d.off:])
	switch {
	case n < 0:
		d.Failf("a varint longer than 64 bits")
		return 0
	case n == 0:
		d.short("a varint")
		return 0
	}
	d.off += n
	return v
}

// Int reads a signed varint.
func (d *Dec) Int() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.B[d.off:])
	switch {
	case n < 0:
		d.Failf("a signed varint longer than 64 bits")
		return 0
	case n == 0:
		d.short("a signed varint")
		return 0
	}
	d.off += n
	return v
}

// UintMax reads an unsigned varint that must not exceed max; what names
// the value in the error ("a timer resolution").
func (d *Dec) UintMax(what string, max uint64) uint64 {
	v := d.Uint()
	if v > max {
		d.Failf("%s of %d, above the limit %d", what, v, max)
		return 0
	}
	return v
}

// Count reads the number of items that follow, each at least one byte
// long: it must not exceed max nor the unread bytes; what names the items
// in the error ("fired timer ids").
func (d *Dec) Count(what string, max int) int {
	v := d.Uint()
	switch {
	case d.err != nil:
		return 0
	case v > uint64(max):
		d.Failf("%d %s, above the limit %d", v, what, max)
		return 0
	case v > uint64(d.Remaining()):
		d.Failf("%d %s in the %d bytes left", v, what, d.Remaining())
		return 0
	}
	return int(v)
}

// Len reads a length prefix and checks it against what remains.
func (d *Dec) Len() int {
	n := d.Uint()
	if d.err != nil {
		return 0
	}
	if n > uint64(d.Remaining()) || n > math.MaxInt32 {
		d.short(fmt.Sprintf("a %d-byte string with %d bytes left", n, d.Remaining()))
		return 0
	}
	return int(n)
}

// Bytes reads a length-prefixed byte string. The result aliases the frame:
// no copy is made.
func (d *Dec) Bytes() []byte {
	n := d.Len()
	if d.err != nil {
		return nil
	}
	p := d.B[d.off : d.off+n : d.off+n]
	d.off += n
	return p
}

// String reads a length-prefixed string.
func (d *Dec) String() string { return string(d.Bytes()) }

// Bool reads a boolean: the byte 0 or 1; any other byte is malformed.
func (d *Dec) Bool() bool {
	switch b := d.U8(); b {
	case 0:
		return false
	case 1:
		return true
	default:
		d.Failf("a boolean byte %d, not 0 or 1", b)
		return false
	}
}
