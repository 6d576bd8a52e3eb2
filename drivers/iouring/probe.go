package iouring

import (
	"fmt"
	"strings"
)

// Report is what Probe found out about the kernel's io_uring.
type Report struct {
	// Kernel is the kernel release (uname -r).
	Kernel string
	// Disabled is the value of the kernel.io_uring_disabled sysctl
	// (0 allowed, 1 restricted to a group, 2 disabled), or -1 when the
	// kernel has no such sysctl.
	Disabled int
	// Err is why io_uring cannot be used, nil when it can: a refused
	// io_uring_setup (ENOSYS: not built in or too old; EPERM: seccomp or
	// the sysctl), a failed mapping or probe.
	Err error
	// Features are the IORING_FEAT_* bits io_uring_setup reported, by
	// name.
	Features []string
	// Ops lists every operation code up to the kernel's last one, with
	// whether it is supported.
	Ops []OpSupport
}

// OpSupport is one operation code and whether the kernel supports it.
type OpSupport struct {
	Code      uint8
	Name      string
	Supported bool
}

// Available reports whether io_uring can be used.
func (r Report) Available() bool { return r.Err == nil }

// Supports reports whether the operation named name (as in Ops, e.g.
// "ACCEPT", "RECV") is supported.
func (r Report) Supports(name string) bool {
	for _, o := range r.Ops {
		if o.Name == name {
			return o.Supported
		}
	}
	return false
}

// String renders the report on a few lines: the kernel, whether io_uring
// is available (and why not), the features, and the supported and
// unsupported operations.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kernel %s", r.Kernel)
	if r.Disabled >= 0 {
		fmt.Fprintf(&b, ", kernel.io_uring_disabled=%d", r.Disabled)
	}
	b.WriteByte('\n')
	if r.Err != nil {
		fmt.Fprintf(&b, "io_uring: unavailable: %v\n", r.Err)
		return b.String()
	}
	b.WriteString("io_uring: available\n")
	fmt.Fprintf(&b, "features: %s\n", strings.Join(r.Features, " "))
	var yes, no []string
	for _, o := range r.Ops {
		if o.Supported {
			yes = append(yes, o.Name)
		} else {
			no = append(no, o.Name)
		}
	}
	fmt.Fprintf(&b, "operations supported (%d): %s\n", len(yes), strings.Join(yes, " "))
	if len(no) > 0 {
		fmt.Fprintf(&b, "operations not supported (%d): %s\n", len(no), strings.Join(no, " "))
	}
	return b.String()
}

// opNames are the IORING_OP_* names by code, as of Linux 6.x.
var opNames = []string{
	"NOP", "READV", "WRITEV", "FSYNC", "READ_FIXED", "WRITE_FIXED", "POLL_ADD", "POLL_REMOVE",
	"SYNC_FILE_RANGE", "SENDMSG", "RECVMSG", "TIMEOUT", "TIMEOUT_REMOVE", "ACCEPT", "ASYNC_CANCEL",
	"LINK_TIMEOUT", "CONNECT", "FALLOCATE", "OPENAT", "CLOSE", "FILES_UPDATE", "STATX", "READ",
	"WRITE", "FADVISE", "MADVISE", "SEND", "RECV", "OPENAT2", "EPOLL_CTL", "SPLICE",
	"PROVIDE_BUFFERS", "REMOVE_BUFFERS", "TEE", "SHUTDOWN", "RENAMEAT", "UNLINKAT", "MKDIRAT",
	"SYMLINKAT", "LINKAT", "MSG_RING", "FSETXATTR", "SETXATTR", "FGETXATTR", "GETXATTR", "SOCKET",
	"URING_CMD", "SEND_ZC", "SENDMSG_ZC", "READ_MULTISHOT", "WAITID", "FUTEX_WAIT", "FUTEX_WAKE",
	"FUTEX_WAITV", "FIXED_FD_INSTALL", "FTRUNCATE", "BIND", "LISTEN", "RECV_ZC", "EPOLL_WAIT",
	"READV_FIXED", "WRITEV_FIXED", "PIPE",
}

// opName returns the name of an operation code ("OP_<n>" past the list).
func opName(code uint8) string {
	if int(code) < len(opNames) {
		return opNames[code]
	}
	return fmt.Sprintf("OP_%d", code)
}
