package httpsget_test

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft"
	"github.com/weftrt/weft/examples/httpsget"
)

// A request to a TLS server that trusts only its own test certificate:
// the handshake verifies it, and the whole body arrives.
func TestGetFetchesOverVerifiedTLS(t *testing.T) {
	page := strings.Repeat("weft over tls\n", 10_000) // several TLS records
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "weft-httpsget", r.UserAgent())
		w.Header().Set("X-Path", r.URL.Path)
		w.Write([]byte(page))
	}))
	defer srv.Close()
	cfg := &tls.Config{RootCAs: srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, ServerName: "example.com"}

	url := srv.URL + "/hello"
	addr, err := httpsget.Resolve(context.Background(), url)
	require.NoError(t, err)
	resp, err := weft.Main(func(c *weft.Ctx) (*httpsget.Response, error) {
		return httpsget.Get(c, url, addr, cfg, time.Minute)
	})
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.Status)
	assert.Equal(t, "/hello", resp.Header.Get("X-Path"))
	assert.Equal(t, page, string(resp.Body))
}

// A server whose certificate the client does not trust is an error, not a
// response.
func TestGetRefusesAnUntrustedServer(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	addr, err := httpsget.Resolve(context.Background(), srv.URL)
	require.NoError(t, err)
	_, err = weft.Main(func(c *weft.Ctx) (*httpsget.Response, error) {
		return httpsget.Get(c, srv.URL, addr, &tls.Config{ServerName: "example.com"}, time.Minute)
	})
	var unknown *tls.CertificateVerificationError
	require.ErrorAs(t, err, &unknown)
}
