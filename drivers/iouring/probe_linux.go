//go:build linux

package iouring

import (
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Probe sets up a small ring, asks the kernel which operations it
// supports (IORING_REGISTER_PROBE) and tears the ring down. The error is
// that of a failure to probe a working io_uring; when io_uring is
// unavailable the Report says why (Report.Err) and the error is nil.
func Probe() (Report, error) {
	rep := Report{Kernel: kernelRelease(), Disabled: disabledSysctl()}
	r, err := newRing(ringOptions{entries: 2})
	if err != nil {
		rep.Err = unavailable(err)
		return rep, nil
	}
	defer r.close()
	rep.Features = featureList(r.features)
	ops, err := probeOps(r.fd)
	if err != nil {
		return rep, err
	}
	rep.Ops = ops
	return rep, nil
}

// probeOps returns the support of every operation code the kernel knows.
func probeOps(fd int) ([]OpSupport, error) {
	const slots = 256
	buf := make([]byte, unsafe.Sizeof(probeHeader{})+slots*unsafe.Sizeof(probeOp{}))
	if err := sysRegister(fd, registerProbe, unsafe.Pointer(&buf[0]), slots); err != nil {
		return nil, os.NewSyscallError("io_uring_register", err)
	}
	h := (*probeHeader)(unsafe.Pointer(&buf[0]))
	ops := unsafe.Slice((*probeOp)(unsafe.Pointer(&buf[unsafe.Sizeof(probeHeader{})])), slots)
	out := make([]OpSupport, 0, int(h.lastOp)+1)
	for i := 0; i <= int(h.lastOp) && i < int(h.opsLen); i++ {
		out = append(out, OpSupport{Code: uint8(i), Name: opName(uint8(i)), Supported: ops[i].flags&probeOpSupported != 0})
	}
	return out, nil
}

// opSet is the set of supported operation codes.
type opSet [256]bool

func (s *opSet) fill(ops []OpSupport) {
	for _, o := range ops {
		s[o.Code] = o.Supported
	}
}

func featureList(f uint32) []string {
	var out []string
	for _, n := range featureNames {
		if f&n.bit != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// disabledSysctl reads kernel.io_uring_disabled (Linux 6.6+), -1 when
// absent.
func disabledSysctl() int {
	b, err := os.ReadFile("/proc/sys/kernel/io_uring_disabled")
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}
