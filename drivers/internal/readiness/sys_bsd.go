//go:build darwin || freebsd || netbsd || openbsd

package readiness

import "golang.org/x/sys/unix"

func sysRead(fd int, p []byte) (int, error)  { return unix.Read(fd, p) }
func sysWrite(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

// recvmsg/sendmsg with several buffers are readv/writev on a socket, and
// golang.org/x/sys has them on every system (it has readv/writev only on
// some).

func sysReadv(fd int, bufs [][]byte) (int, error) {
	n, _, _, _, err := unix.RecvmsgBuffers(fd, bufs, nil, 0)
	return n, err
}

func sysWritev(fd int, bufs [][]byte) (int, error) {
	return unix.SendmsgBuffers(fd, bufs, nil, nil, 0)
}
