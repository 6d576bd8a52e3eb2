package co_test

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wio"
)

type message struct {
	Seq  int    `json:"seq"`
	Text string `json:"text"`
}

// TestBufioAndJSONOverAWeftStream encodes messages with encoding/json
// through a bufio.Writer on one task and decodes them through a
// bufio.Reader on another, over an in-memory weft duplex stream with a
// small buffer, so both sides suspend many times.
func TestBufioAndJSONOverAWeftStream(t *testing.T) {
	r := newRuntime(t)
	const n = 200
	err := runE(t, r, func(c *co.Ctx) error {
		a, b := wio.Duplex(64)
		writer := co.Go(c, func(c *co.Ctx) error {
			bw := bufio.NewWriterSize(co.Writer(c, a), 128)
			enc := json.NewEncoder(bw)
			for i := range n {
				if err := enc.Encode(message{Seq: i, Text: fmt.Sprintf("message number %d", i)}); err != nil {
					return err
				}
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			return a.CloseWrite()
		})
		dec := json.NewDecoder(bufio.NewReader(co.Reader(c, b)))
		for i := 0; ; i++ {
			var m message
			err := dec.Decode(&m)
			if err == io.EOF {
				if i != n {
					return fmt.Errorf("decoded %d messages, want %d", i, n)
				}
				break
			}
			if err != nil {
				return err
			}
			if m.Seq != i || m.Text != fmt.Sprintf("message number %d", i) {
				return fmt.Errorf("message %d: got %+v", i, m)
			}
		}
		werr, err := co.AwaitResult(c, writer)
		return errors.Join(werr, err)
	})
	require.NoError(t, err)
}

// selfSigned returns a certificate for "weft.test" and a pool trusting it.
func selfSigned(t testing.TB) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "weft.test"},
		DNSNames:              []string{"weft.test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	leaf, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// TestTLSOverAnInMemoryWeftStream runs a crypto/tls handshake and a
// two-way exchange between two coroutine tasks over a weft duplex stream.
// (examples/cointerop does the same over TCP on the epoll driver.)
func TestTLSOverAnInMemoryWeftStream(t *testing.T) {
	cert, roots := selfSigned(t)
	r := newRuntime(t)
	err := runE(t, r, func(c *co.Ctx) error {
		a, b := wio.Duplex(4096)
		server := co.Go(c, func(c *co.Ctx) error {
			conn := tls.Server(co.Conn(c, b), &tls.Config{Certificates: []tls.Certificate{cert}})
			defer conn.Close()
			line, err := bufio.NewReader(conn).ReadString('\n')
			if err != nil {
				return fmt.Errorf("server read: %w", err)
			}
			_, err = io.WriteString(conn, "echo: "+line)
			return err
		})
		conn := tls.Client(co.Conn(c, a), &tls.Config{RootCAs: roots, ServerName: "weft.test"})
		defer conn.Close()
		if err := conn.Handshake(); err != nil {
			return fmt.Errorf("client handshake: %w", err)
		}
		if _, err := io.WriteString(conn, "hello over tls\n"); err != nil {
			return err
		}
		reply, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			return fmt.Errorf("client read: %w", err)
		}
		if reply != "echo: hello over tls\n" {
			return fmt.Errorf("got %q", reply)
		}
		if v := conn.ConnectionState().Version; v != tls.VersionTLS13 {
			return fmt.Errorf("negotiated version %x", v)
		}
		serr, err := co.AwaitResult(c, server)
		return errors.Join(serr, err)
	})
	require.NoError(t, err)
}

// TestAPastDeadlineSetWhileAReadWaitsFailsItWithATimeout needs no timer: a
// deadline moved into the past wakes the waiting body, whose Read fails
// with an error matching os.ErrDeadlineExceeded and reporting Timeout.
// The stream stays usable once the deadline is cleared.
func TestAPastDeadlineSetWhileAReadWaitsFailsItWithATimeout(t *testing.T) {
	r := newRuntime(t)
	err := runE(t, r, func(c *co.Ctx) error {
		a, b := wio.Duplex(16)
		conn := co.Conn(c, a)
		setter := co.Go(c, func(c *co.Ctx) int {
			for range 5 {
				c.Yield() // let the reader wait
			}
			_ = conn.SetReadDeadline(time.Now().Add(-time.Second))
			return 0
		})
		buf := make([]byte, 8)
		_, err := conn.Read(buf)
		var ne net.Error
		if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
			return fmt.Errorf("read past its deadline: got %v", err)
		}
		co.Await(c, setter)
		// A deadline already past fails at once, without waiting.
		if _, err := conn.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("second read: got %v", err)
		}
		_ = conn.SetReadDeadline(time.Time{})
		if _, err := co.AwaitResult(c, b.Write([]byte("ok"))); err != nil {
			return err
		}
		n, err := conn.Read(buf)
		if err != nil || string(buf[:n]) != "ok" {
			return fmt.Errorf("read after clearing the deadline: %q, %v", buf[:n], err)
		}
		return nil
	})
	require.NoError(t, err)
}

func TestReadersAndWritersOutsideTheirTaskPanic(t *testing.T) {
	r := newRuntime(t)
	a, _ := wio.Duplex(16)
	conn, err := run(t, r, func(c *co.Ctx) *co.StreamConn { return co.Conn(c, a) })
	require.NoError(t, err)
	assert.PanicsWithValue(t,
		"weft/co: Conn.Read called outside its coroutine task: the *co.Ctx belongs to a task that is not running on this goroutine (it was passed to another goroutine or kept after the task ended)",
		func() { _, _ = conn.Read(make([]byte, 1)) })
}
