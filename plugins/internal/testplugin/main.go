// Command testplugin is a deliberately faulty plugin for the host's tests.
// Its first argument chooses the fault:
//
//	cookie            serves with another magic cookie value
//	protocol          offers only protocol version 99
//	kind              describes itself as a timer plugin
//	garbage           prints a line that is not a handshake and exits
//	log               serves the epoll driver and logs a record at start
//	lying-name        describes itself with a name holding a NUL
//	lying-protocol    describes itself as speaking protocol 7
//	malformed-driver  answers each driver request frame with a completion
//	                  of an unknown status
//	malformed-timer   says hello, then answers each timer frame with an
//	                  unknown reply
//	malformed-policy  answers each policy frame with a truncated answer
package main

import (
	"fmt"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/epoll"
	"github.com/weftrt/weft/plugins/internal/server"
	"github.com/weftrt/weft/plugins/internal/wire"
)

func main() {
	mode := ""
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	ds := &server.DriverService{New: func() (core.Driver, error) { return epoll.New(epoll.DefaultEvents) }, Log: server.Logger()}
	o := server.Options{
		Info:     wire.Info{Kind: wire.KindDriver, Name: "test-" + mode},
		Register: ds.Register,
	}
	switch mode {
	case "cookie":
		o.Cookie = "not-the-weft-cookie"
	case "protocol":
		o.Versions = []int{99}
	case "kind":
		o.Info.Kind = wire.KindTimer
	case "garbage":
		fmt.Println("hello, I am not a plugin")
		os.Exit(0)
	case "log":
		server.Logger().Warn("test plugin starting", "answer", 42)
	case "lying-name":
		o.Describe = func(i *wire.Info) { i.Name = "epoll\x00" }
	case "lying-protocol":
		o.Describe = func(i *wire.Info) { i.Protocol = 7 }
	case "malformed-driver":
		o.Register = garbler{wire.DriverServiceName, func(req []byte, _ int) []byte {
			d := wire.NewDec(req)
			d.U8()
			var e wire.Enc
			e.Uint(d.Uint()) // the first request's id
			e.U8(9)          // no such status
			return e.B
		}}.register
	case "malformed-timer":
		o.Info.Kind = wire.KindTimer
		o.Register = garbler{wire.TimerServiceName, func(_ []byte, i int) []byte {
			if i == 0 {
				return []byte{wire.TimerHello, 0}
			}
			return []byte{77} // no such reply
		}}.register
	case "malformed-policy":
		o.Info.Kind = wire.KindScheduler
		o.Register = garbler{wire.SchedulerServiceName, func(req []byte, _ int) []byte {
			return []byte{1, 5, 1} // seq 1, five ids, then the frame ends
		}}.register
	}
	server.Serve(o)
}

// garbler serves a session service that answers the i-th frame it receives
// with answer(frame, i).
type garbler struct {
	service string
	answer  func(req []byte, i int) []byte
}

func (g garbler) register(s *grpc.Server) { s.RegisterService(wire.SessionDesc(g.service), g) }

// Session implements wire.SessionServer.
func (g garbler) Session(stream grpc.ServerStream) error {
	for i := 0; ; i++ {
		m := new(wrapperspb.BytesValue)
		if err := stream.RecvMsg(m); err != nil {
			return nil
		}
		if err := stream.SendMsg(wrapperspb.Bytes(g.answer(m.Value, i))); err != nil {
			return nil
		}
	}
}
