package wnet_test

import (
	"errors"
	gonet "net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/lib/wnet"
)

// worker is a core.Worker with the given driver.
type worker struct{ d core.Driver }

func (w *worker) Scheduler() core.Scheduler { return nil }
func (w *worker) Defer(x core.Waker)        { x.Wake() }
func (w *worker) Driver() core.Driver       { return w.d }
func (w *worker) Time() *core.Time          { return nil }

func TestCreatingASocketOutsideARuntimeFailsWithErrNoDriver(t *testing.T) {
	_, err := wnet.ListenTCP(core.NewContext(nil), "tcp", "127.0.0.1:0")
	assert.ErrorIs(t, err, wnet.ErrNoDriver)
	var op *gonet.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "listen", op.Op)
}

func TestCreatingASocketInARuntimeWithoutADriverFailsWithErrNoDriver(t *testing.T) {
	cx := spi.NewWorkerContext(&worker{}).Context()
	_, err := wnet.BindUDP(cx, "udp", "127.0.0.1:0")
	assert.ErrorIs(t, err, wnet.ErrNoDriver)
	_, err = wnet.ListenUnix(cx, "/nonexistent/s.sock")
	assert.ErrorIs(t, err, wnet.ErrNoDriver)
	r, _ := wnet.DialTCP("tcp", "127.0.0.1:1").Poll(cx)
	assert.ErrorIs(t, r.Err, wnet.ErrNoDriver)
}

// streamOnly is a driver with stream sockets only: the rest of the
// interface is left unimplemented.
type streamOnly struct{ core.Driver }

func TestDatagramsOnADriverWithoutThemFailWithErrUnsupported(t *testing.T) {
	cx := spi.NewWorkerContext(&worker{d: streamOnly{}}).Context()
	_, err := wnet.BindUDP(cx, "udp", "127.0.0.1:0")
	assert.ErrorIs(t, err, wnet.ErrUnsupported)
}

// listenDriver records Listen's arguments and fails it with errno.
type listenDriver struct {
	core.Driver
	network, address string
	opts             core.SocketOptions
	err              error
}

func (d *listenDriver) Listen(network, address string, opts core.SocketOptions) (core.Handle, core.Addr, error) {
	d.network, d.address, d.opts = network, address, opts
	return 0, core.Addr{}, d.err
}

func TestListenTCPSetsReuseAddrAndWrapsErrorsLikeGo(t *testing.T) {
	d := &listenDriver{err: errors.New("bind: address already in use")}
	cx := spi.NewWorkerContext(&worker{d: d}).Context()
	_, err := wnet.ListenTCP(cx, "tcp4", "127.0.0.1:80")
	assert.True(t, d.opts.ReuseAddr, "ListenTCP sets SO_REUSEADDR, as Go's net does")
	assert.Equal(t, "tcp4", d.network)
	var op *gonet.OpError
	require.ErrorAs(t, err, &op)
	assert.Equal(t, "listen", op.Op)
	assert.ErrorIs(t, err, d.err)

	_, _ = wnet.ListenConfig{ReusePort: true, Backlog: 7}.ListenTCP(cx, "tcp", ":0")
	assert.Equal(t, core.SocketOptions{ReusePort: true, Backlog: 7}, d.opts)
}
