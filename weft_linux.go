package weft

import "github.com/weftrt/weft/core/config"

func init() {
	// On Linux the default composition does I/O through epoll.
	config.DefaultDriver = "epoll"
}
