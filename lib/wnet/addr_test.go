package wnet

import (
	gonet "net"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/weftrt/weft/core"
)

func TestDriverAddressesBecomeTheNetPackagesTypes(t *testing.T) {
	tcp := netAddr(core.Addr{Net: "tcp", Addr: "127.0.0.1:80"})
	assert.Equal(t, &gonet.TCPAddr{IP: gonet.IPv4(127, 0, 0, 1).To4(), Port: 80}, tcp)
	udp := netAddr(core.Addr{Net: "udp", Addr: "[::1]:53"})
	assert.Equal(t, "[::1]:53", udp.String())
	assert.IsType(t, &gonet.UDPAddr{}, udp)
	unix := netAddr(core.Addr{Net: "unixgram", Addr: "/tmp/x.sock"})
	assert.Equal(t, &gonet.UnixAddr{Name: "/tmp/x.sock", Net: "unixgram"}, unix)
	// What cannot be parsed is kept as the driver's address.
	odd := core.Addr{Net: "sim", Addr: "node-3"}
	assert.Equal(t, odd, netAddr(odd))
	assert.Nil(t, netAddr(core.Addr{}))
}
