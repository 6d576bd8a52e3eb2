// Package httpsget makes an HTTPS request on weft, in a coroutine task:
// the TCP connection is weft's (its bytes move through weft's driver),
// crypto/tls and net/http's message types run on it as on any net.Conn.
// Command httpsget (cmd/httpsget) fetches a URL; examples/plaingo/httpsget
// is the same program with net/http's client.
package httpsget

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wnet"
)

// Response is what Get read: the status and the whole body.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Resolve looks up rawURL's host with Go's resolver (a blocking call, so
// it runs before the request, outside any task) and returns the address
// to dial, "ip:port".
func Resolve(ctx context.Context, rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", err
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, u.Hostname())
	if err != nil {
		return "", err
	}
	return net.JoinHostPort(ips[0].IP.String(), port), nil
}

// Get sends a GET for rawURL to addr (from Resolve) over TLS, with cfg
// (nil: the system's roots and the URL's host name), and reads the whole
// response within timeout.
func Get(c *co.Ctx, rawURL, addr string, cfg *tls.Config, timeout time.Duration) (*Response, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "https" {
		return nil, fmt.Errorf("httpsget: %q is not an https URL", rawURL)
	}
	s, err := co.AwaitResult(c, wnet.DialTCPTimeout("tcp", addr, timeout))
	if err != nil {
		return nil, err
	}
	conn := co.Conn(c, s)
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(timeout)); err != nil {
		return nil, err
	}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	if cfg.ServerName == "" {
		cfg.ServerName = u.Hostname()
	}
	tc := tls.Client(conn, cfg)
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "weft-httpsget")
	req.Close = true // one request on this connection
	if err := req.Write(tc); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}
