// Package sockets is the socket plumbing weft's drivers share: creating
// non-blocking, close-on-exec sockets with core.SocketOptions applied,
// resolving a network and address to a socket address and printing one
// back as Go's net does, binding and listening, the first half of a
// non-blocking connect and the reading of its outcome, socket options,
// multicast membership, and the kernel's listen backlog.
//
// Everything here is a plain system call on a descriptor the caller owns;
// nothing registers the descriptor anywhere or keeps state. The package
// builds on Linux, darwin, FreeBSD, NetBSD and OpenBSD through
// golang.org/x/sys/unix; what differs between them (how the flags of a new
// socket are set, accept4, the keep-alive options, the multicast request,
// the backlog sysctl, dual-stack sockets) is in per-system files. Raw
// socket addresses, which only io_uring needs, are Linux-only.
//
// Errors are those of Go's net where it has one (net.UnknownNetworkError,
// *net.AddrError, *net.DNSError) and *os.SyscallError otherwise.
package sockets
