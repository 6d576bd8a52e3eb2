// Package cointerop shows weft streams used through the standard library
// from coroutine tasks (lib/co): crypto/tls, bufio and encoding/json over
// TCP connections on the epoll driver. Its tests are the proof; Serve and
// Dial below are the small helpers they share, usable as a starting point
// for a TLS service on weft.
package cointerop

import (
	"crypto/tls"
	"net"

	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wnet"
)

// Accept accepts one connection on ln from c's body and returns it as a
// TLS server connection (the handshake happens on first use, or with
// HandshakeContext/Handshake).
func Accept(c *co.Ctx, ln *wnet.TCPListener, cfg *tls.Config) (*tls.Conn, error) {
	s, err := co.AwaitResult(c, ln.Accept())
	if err != nil {
		return nil, err
	}
	return tls.Server(co.Conn(c, s), cfg), nil
}

// Dial connects to addr from c's body and returns a TLS client connection
// whose handshake has completed.
func Dial(c *co.Ctx, addr string, cfg *tls.Config) (*tls.Conn, error) {
	s, err := co.AwaitResult(c, wnet.DialTCP("tcp", addr))
	if err != nil {
		return nil, err
	}
	conn := tls.Client(co.Conn(c, s), cfg)
	if err := conn.Handshake(); err != nil {
		_ = conn.Close()
		return nil, err
	}
	return conn, nil
}

var _ net.Conn = (*co.StreamConn)(nil)
