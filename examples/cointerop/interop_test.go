package cointerop_test

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
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

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/cointerop"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/wnet"
	"github.com/weftrt/weft/runtime/rt"
)

// runtimes are the compositions every test runs on: the epoll driver and
// the wheel timer under both schedulers.
var runtimes = []struct {
	name      string
	configure func(*rt.Builder)
}{
	{"currentthread", func(b *rt.Builder) { b.Scheduler("currentthread").Driver("epoll").Timer("wheel") }},
	{"workstealing", func(b *rt.Builder) { b.Scheduler("workstealing").Workers(4).Driver("epoll").Timer("wheel") }},
}

func eachRuntime(t *testing.T, body func(t *testing.T, r *rt.Runtime)) {
	for _, rc := range runtimes {
		t.Run(rc.name, func(t *testing.T) {
			b := weft.NewBuilder().IgnoreEnv()
			rc.configure(b)
			r, err := b.Build()
			require.NoError(t, err)
			defer func() { require.NoError(t, r.Close()) }()
			body(t, r)
		})
	}
}

// run runs body as the root coroutine task with a watchdog.
func run(t *testing.T, r *rt.Runtime, body func(c *co.Ctx) error) {
	t.Helper()
	ch := make(chan error, 1)
	go func() {
		ch <- co.Run(r, body)
	}()
	select {
	case err := <-ch:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		r.ShutdownBackground()
		t.Fatal("the test hung")
	}
}

func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "weft.test"},
		DNSNames:              []string{"weft.test"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
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

// TestTLSOverWeftTCP runs a crypto/tls server and client, each a
// coroutine task, over a weft TCP connection on the epoll driver. They
// exchange line-delimited requests and replies, then the client streams
// 4 MiB that the server hashes and the server streams 4 MiB back, so data
// crosses the TLS layer in both directions, in records far larger than
// the socket buffers.
func TestTLSOverWeftTCP(t *testing.T) {
	cert, roots := selfSigned(t)
	const bulk = 4 << 20
	payload := make([]byte, bulk)
	_, _ = rand.Read(payload)
	sum := sha256.Sum256(payload)
	eachRuntime(t, func(t *testing.T, r *rt.Runtime) {
		run(t, r, func(c *co.Ctx) error {
			ln, err := wnet.ListenTCP(c.Context(), "tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			defer ln.Close()
			server := co.Go(c, func(c *co.Ctx) error {
				conn, err := cointerop.Accept(c, ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13})
				if err != nil {
					return fmt.Errorf("accept: %w", err)
				}
				defer conn.Close()
				br := bufio.NewReader(conn)
				for range 10 {
					line, err := br.ReadString('\n')
					if err != nil {
						return fmt.Errorf("server read: %w", err)
					}
					if _, err := io.WriteString(conn, "echo "+line); err != nil {
						return err
					}
				}
				h := sha256.New()
				if _, err := io.CopyN(h, br, bulk); err != nil {
					return fmt.Errorf("server bulk read: %w", err)
				}
				if !bytes.Equal(h.Sum(nil), sum[:]) {
					return errors.New("server: the bulk upload arrived corrupted")
				}
				if _, err := conn.Write(payload); err != nil {
					return fmt.Errorf("server bulk write: %w", err)
				}
				return conn.CloseWrite()
			})
			conn, err := cointerop.Dial(c, ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "weft.test"})
			if err != nil {
				return fmt.Errorf("dial: %w", err)
			}
			defer conn.Close()
			if v := conn.ConnectionState().Version; v != tls.VersionTLS13 {
				return fmt.Errorf("negotiated %x", v)
			}
			br := bufio.NewReader(conn)
			for i := range 10 {
				msg := fmt.Sprintf("request %d\n", i)
				if _, err := io.WriteString(conn, msg); err != nil {
					return err
				}
				reply, err := br.ReadString('\n')
				if err != nil {
					return fmt.Errorf("client read: %w", err)
				}
				if reply != "echo "+msg {
					return fmt.Errorf("reply %q to %q", reply, msg)
				}
			}
			if _, err := conn.Write(payload); err != nil {
				return fmt.Errorf("client bulk write: %w", err)
			}
			back, err := io.ReadAll(br)
			if err != nil {
				return fmt.Errorf("client bulk read: %w", err)
			}
			if !bytes.Equal(back, payload) {
				return fmt.Errorf("client: got %d bytes back, corrupted or short", len(back))
			}
			err, jerr := co.AwaitResult(c, server)
			return errors.Join(err, jerr)
		})
	})
}

type record struct {
	ID    int               `json:"id"`
	Name  string            `json:"name"`
	Tags  []string          `json:"tags"`
	Attrs map[string]string `json:"attrs"`
}

// TestJSONOverWeftTCP sends a stream of JSON records through bufio over a
// plain weft TCP connection; the server decodes each and answers with its
// own encoding, which the client decodes and compares.
func TestJSONOverWeftTCP(t *testing.T) {
	const n = 500
	eachRuntime(t, func(t *testing.T, r *rt.Runtime) {
		run(t, r, func(c *co.Ctx) error {
			ln, err := wnet.ListenTCP(c.Context(), "tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			defer ln.Close()
			server := co.Go(c, func(c *co.Ctx) error {
				s, err := co.AwaitResult(c, ln.Accept())
				if err != nil {
					return err
				}
				conn := co.Conn(c, s)
				defer conn.Close()
				dec := json.NewDecoder(bufio.NewReader(conn))
				bw := bufio.NewWriter(conn)
				enc := json.NewEncoder(bw)
				for {
					var rec record
					if err := dec.Decode(&rec); err == io.EOF {
						if err := bw.Flush(); err != nil {
							return err
						}
						return conn.CloseWrite()
					} else if err != nil {
						return err
					}
					rec.Name = "seen " + rec.Name
					if err := enc.Encode(rec); err != nil {
						return err
					}
				}
			})
			s, err := co.AwaitResult(c, wnet.DialTCP("tcp", ln.Addr().String()))
			if err != nil {
				return err
			}
			conn := co.Conn(c, s)
			defer conn.Close()
			// Write everything from a second task while this one reads,
			// so neither side's socket buffer can fill up and stall the
			// other: two Conns on one stream, one per task.
			writer := co.Go(c, func(c *co.Ctx) error {
				w := co.Conn(c, s)
				bw := bufio.NewWriter(w)
				enc := json.NewEncoder(bw)
				for i := range n {
					if err := enc.Encode(record{ID: i, Name: fmt.Sprint("r", i), Tags: []string{"a", "b"}, Attrs: map[string]string{"k": fmt.Sprint(i)}}); err != nil {
						return err
					}
				}
				if err := bw.Flush(); err != nil {
					return err
				}
				return w.CloseWrite()
			})
			dec := json.NewDecoder(bufio.NewReader(conn))
			for i := range n {
				var rec record
				if err := dec.Decode(&rec); err != nil {
					return fmt.Errorf("record %d: %w", i, err)
				}
				if rec.ID != i || rec.Name != fmt.Sprint("seen r", i) || rec.Attrs["k"] != fmt.Sprint(i) {
					return fmt.Errorf("record %d came back as %+v", i, rec)
				}
			}
			var extra record
			if err := dec.Decode(&extra); err != io.EOF {
				return fmt.Errorf("after the last record: %v", err)
			}
			err1, jerr1 := co.AwaitResult(c, writer)
			err2, jerr2 := co.AwaitResult(c, server)
			return errors.Join(err1, jerr1, err2, jerr2)
		})
	})
}

// TestReadDeadlineThroughTheTimer: a Read with a deadline in the near
// future on a connection the peer never writes to fails with a timeout
// once the runtime's timer fires, and the connection keeps working.
func TestReadDeadlineThroughTheTimer(t *testing.T) {
	eachRuntime(t, func(t *testing.T, r *rt.Runtime) {
		run(t, r, func(c *co.Ctx) error {
			ln, err := wnet.ListenTCP(c.Context(), "tcp", "127.0.0.1:0")
			if err != nil {
				return err
			}
			defer ln.Close()
			cs, err := co.AwaitResult(c, wnet.DialTCP("tcp", ln.Addr().String()))
			if err != nil {
				return err
			}
			ss, err := co.AwaitResult(c, ln.Accept())
			if err != nil {
				return err
			}
			client, server := co.Conn(c, cs), co.Conn(c, ss)
			defer client.Close()
			defer server.Close()
			_ = client.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			buf := make([]byte, 16)
			_, err = client.Read(buf)
			var ne net.Error
			if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
				return fmt.Errorf("read past its deadline: %v", err)
			}
			_ = client.SetReadDeadline(time.Time{})
			if _, err := server.Write([]byte("still alive")); err != nil {
				return err
			}
			k, err := io.ReadFull(client, buf[:11])
			if err != nil || string(buf[:k]) != "still alive" {
				return fmt.Errorf("after the timeout: %q, %v", buf[:k], err)
			}
			return nil
		})
	})
}
