//go:build linux

package iouring

import (
	"os"
	"sync/atomic"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The io_uring ABI (include/uapi/linux/io_uring.h), declared here because
// golang.org/x/sys has the system call numbers but not the structures.
// Only what the driver uses is declared.

// Setup flags (io_uring_params.flags).
const (
	setupSQPoll = 1 << 1
	setupClamp  = 1 << 4
)

// Feature bits (io_uring_params.features).
const (
	featSingleMmap   = 1 << 0
	featNoDrop       = 1 << 1
	featSubmitStable = 1 << 2
	featRWCurPos     = 1 << 3
	featFastPoll     = 1 << 5
	featSQPollNonFix = 1 << 7
	featExtArg       = 1 << 8
	featNativeWorker = 1 << 9
	featCQESkip      = 1 << 11
	featLinkedFile   = 1 << 12
)

// featureNames names the feature bits for the probe report.
var featureNames = []struct {
	bit  uint32
	name string
}{
	{featSingleMmap, "SINGLE_MMAP"},
	{featNoDrop, "NODROP"},
	{featSubmitStable, "SUBMIT_STABLE"},
	{featRWCurPos, "RW_CUR_POS"},
	{1 << 4, "CUR_PERSONALITY"},
	{featFastPoll, "FAST_POLL"},
	{1 << 6, "POLL_32BITS"},
	{featSQPollNonFix, "SQPOLL_NONFIXED"},
	{featExtArg, "EXT_ARG"},
	{featNativeWorker, "NATIVE_WORKERS"},
	{1 << 10, "RSRC_TAGS"},
	{featCQESkip, "CQE_SKIP"},
	{featLinkedFile, "LINKED_FILE"},
	{1 << 13, "REG_REG_RING"},
	{1 << 14, "RECVSEND_BUNDLE"},
	{1 << 15, "MIN_TIMEOUT"},
}

// mmap offsets of the three regions.
const (
	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000
)

// SQ ring flags (the word at sqOffsets.flags).
const (
	sqNeedWakeup = 1 << 0
	sqCQOverflow = 1 << 1
)

// io_uring_enter flags.
const (
	enterGetEvents = 1 << 0
	enterSQWakeup  = 1 << 1
	enterSQWait    = 1 << 2
	enterExtArg    = 1 << 3
)

// io_uring_register opcodes.
const registerProbe = 8

// CQE flags.
const cqeFMore = 1 << 1

// Operation codes. The names of the rest are in opNames (probe.go).
const (
	opNop         = 0
	opReadv       = 1
	opWritev      = 2
	opFsync       = 3
	opSendmsg     = 9
	opRecvmsg     = 10
	opTimeout     = 11
	opAccept      = 13
	opAsyncCancel = 14
	opConnect     = 16
	opOpenat      = 18
	opClose       = 19
	opRead        = 22
	opWrite       = 23
	opSend        = 26
	opRecv        = 27
)

// sqe is struct io_uring_sqe (64 bytes). Unions are flattened to the
// member the driver uses: off doubles as addr2 (accept's addrlen
// pointer), opFlags as rw_flags, msg_flags, accept_flags, cancel_flags,
// open_flags, timeout_flags and fsync_flags.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	opFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFdIn  int32
	addr3       uint64
	_           uint64
}

// cqe is struct io_uring_cqe (16 bytes; the driver never asks for CQE32).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// params is struct io_uring_params.
type params struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFd         uint32
	resv         [3]uint32
	sqOff        sqOffsets
	cqOff        cqOffsets
}

// getEventsArg is struct io_uring_getevents_arg, passed with
// IORING_ENTER_EXT_ARG to bound a wait.
type getEventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// kernelTimespec is struct __kernel_timespec.
type kernelTimespec struct {
	sec  int64
	nsec int64
}

// probeOp and probeHeader are struct io_uring_probe_op and io_uring_probe.
type probeOp struct {
	op    uint8
	resv  uint8
	flags uint16
	resv2 uint32
}

type probeHeader struct {
	lastOp uint8
	opsLen uint8
	resv   uint16
	resv2  [3]uint32
}

const probeOpSupported = 1 << 0

// Compile-time size checks of the ABI structures.
var (
	_ [64 - unsafe.Sizeof(sqe{})]struct{}
	_ [unsafe.Sizeof(sqe{}) - 64]struct{}
	_ [16 - unsafe.Sizeof(cqe{})]struct{}
	_ [120 - unsafe.Sizeof(params{})]struct{}
	_ [unsafe.Sizeof(params{}) - 120]struct{}
	_ [24 - unsafe.Sizeof(getEventsArg{})]struct{}
	_ [8 - unsafe.Sizeof(probeOp{})]struct{}
	_ [16 - unsafe.Sizeof(probeHeader{})]struct{}
)

// setupHook, when set (by tests), replaces the io_uring_setup system
// call's outcome: a non-nil error is returned as if the kernel had
// refused. It exists to exercise the fallback without a kernel that
// refuses io_uring.
var setupHook atomic.Pointer[func() error]

// sysSetup is io_uring_setup(2).
func sysSetup(entries uint32, p *params) (int, error) {
	if h := setupHook.Load(); h != nil {
		if err := (*h)(); err != nil {
			return -1, err
		}
	}
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

// enterCalls counts io_uring_enter calls, for the tests of batching.
var enterCalls atomic.Uint64

// sysEnter is io_uring_enter(2). It goes through the ordinary system call
// path (entersyscall/exitsyscall): even a submission can do work inline
// (a cached file read, a socket send) and a wait blocks.
func sysEnter(fd int, toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSize uintptr) (int, error) {
	enterCalls.Add(1)
	n, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(fd), uintptr(toSubmit), uintptr(minComplete),
		uintptr(flags), uintptr(arg), argSize)
	if errno != 0 {
		return int(n), errno
	}
	return int(n), nil
}

// sysRegister is io_uring_register(2).
func sysRegister(fd int, opcode uint32, arg unsafe.Pointer, nrArgs uint32) error {
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(opcode), uintptr(arg), uintptr(nrArgs), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// syscallErr wraps a kernel error number from a CQE's res.
func syscallErr(name string, res int32) error {
	return os.NewSyscallError(name, syscall.Errno(-res))
}
