//go:build darwin || freebsd || netbsd || openbsd

package weft

import "github.com/weftrt/weft/core/config"

func init() {
	// On macOS and the BSDs the default composition does I/O through
	// kqueue.
	config.DefaultDriver = "kqueue"
}
