package iouring

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/weftrt/weft/core"
)

// Name is the driver's registered name, the value of driver.kind that
// selects it.
const Name = "iouring"

// Fallback policies (Config.Fallback).
const (
	// FallbackEpoll builds the driver registered as "epoll" instead. The
	// module does not link it: a program that wants the fallback imports
	// EpollImport (the weft facade does).
	FallbackEpoll = "epoll"
	FallbackError = "error"
)

// EpollImport is the import path that links the fallback driver of
// FallbackEpoll.
const EpollImport = "github.com/weftrt/weft/drivers/epoll"

// Options are the set-up choices of a Driver.
type Options struct {
	// Entries is the number of SQ entries, a power of two (the kernel
	// clamps it to its maximum); the CQ gets twice as many. 0 means
	// DefaultEntries.
	Entries int
	// SQPoll makes a kernel thread poll the submission queue, so that
	// submitting costs no system call while the thread is awake.
	SQPoll bool
	// SQPollIdle is how long that thread spins without work before it
	// sleeps (the kernel's default, 1 s, when 0).
	SQPollIdle time.Duration
}

// DefaultEntries is the SQ size when Options.Entries is 0.
const DefaultEntries = 256

// Config is the iouring module's configuration subtree (the keys under
// "driver" when driver.kind is "iouring").
type Config struct {
	// Entries is the submission queue size, a power of two from 1 to
	// 32768 (the completion queue is twice as large). Default 256.
	Entries int `koanf:"entries"`
	// SQPoll makes a kernel thread poll the submission queue: submitting
	// costs no system call while that thread is awake, at the price of a
	// core it keeps busy. Default false.
	SQPoll bool `koanf:"sqpoll"`
	// SQPollIdle is how long the SQPOLL thread spins without work before
	// it sleeps (millisecond resolution; 0 means the kernel's 1 s). Only
	// with sqpoll.
	SQPollIdle time.Duration `koanf:"sqpoll_idle"`
	// Fallback says what to do when the kernel offers no usable io_uring
	// (ENOSYS, EPERM from seccomp or kernel.io_uring_disabled, a kernel
	// older than 5.6): "epoll" (the default) builds the epoll driver
	// instead and logs why, and fails naming this key and the import that
	// links epoll when the program does not link it; "error" fails the
	// runtime's build with the cause.
	Fallback string `koanf:"fallback"`
}

// DefaultConfig returns the defaults: 256 entries, no SQPOLL, fall back
// to epoll.
func DefaultConfig() Config {
	return Config{Entries: DefaultEntries, Fallback: FallbackEpoll}
}

// Validate reports every invalid key as a *core.ConfigError naming it
// (joined with errors.Join when there are several).
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, problem string, args ...any) {
		errs = append(errs, &core.ConfigError{Key: key, Problem: fmt.Sprintf(problem, args...)})
	}
	if c.Entries < 1 || c.Entries > 32768 || c.Entries&(c.Entries-1) != 0 {
		bad("entries", "must be a power of two from 1 to 32768, got %d", c.Entries)
	}
	if c.SQPollIdle < 0 || c.SQPollIdle > time.Hour {
		bad("sqpoll_idle", "must be between 0 and 1h, got %v", c.SQPollIdle)
	}
	if c.SQPollIdle != 0 && !c.SQPoll {
		bad("sqpoll_idle", "is only meaningful with sqpoll: true")
	}
	if c.Fallback != FallbackEpoll && c.Fallback != FallbackError {
		bad("fallback", "must be %q or %q, got %q", FallbackEpoll, FallbackError, c.Fallback)
	}
	return errors.Join(errs...)
}

func (c *Config) options() Options {
	return Options{Entries: c.Entries, SQPoll: c.SQPoll, SQPollIdle: c.SQPollIdle}
}

// fallbackLog returns the logger that announces a fallback when the
// runtime hands the driver none (core.DriverParams.Log); tests replace it.
var fallbackLog = slog.Default

// paramsLog returns the runtime's logger from p, or fallbackLog's.
func paramsLog(p core.DriverParams) *slog.Logger {
	if p.Log != nil {
		return p.Log
	}
	return fallbackLog()
}

// lookupFallback finds the module of the fallback driver in the registry;
// tests replace it to stand a fake in for epoll without registering one
// process-wide.
var lookupFallback = core.Lookup

// build creates the driver for c, or the fallback.
func build(c Config, params core.DriverParams) (core.Driver, error) {
	d, err := newDriver(c.options())
	if err == nil {
		return d, nil
	}
	if !errors.Is(err, ErrUnavailable) {
		return nil, err
	}
	if c.Fallback == FallbackError {
		return nil, fmt.Errorf("%w (driver.fallback is %q; set it to %q to use epoll instead)", err, FallbackError, FallbackEpoll)
	}
	m, lerr := lookupFallback(core.KindDriver, FallbackEpoll)
	if lerr != nil {
		return nil, fmt.Errorf("%w; and driver.fallback is %q, but that driver is not linked into this program "+
			"(import _ %q, or set driver.fallback to %q): %w", err, FallbackEpoll, EpollImport, FallbackError, lerr)
	}
	fb, ferr := m.BuildDriver(nil, params)
	if ferr != nil {
		return nil, fmt.Errorf("%w; and the fallback driver: %w", err, ferr)
	}
	paramsLog(params).Warn("weft: io_uring is unavailable; using the epoll driver instead", "driver", Name, "fallback", FallbackEpoll, "cause", err.Error())
	return fb, nil
}

func init() {
	core.RegisterDriver(Name,
		"Linux io_uring completion driver: batched submissions, async cancel, files through the ring; falls back to epoll",
		DefaultConfig, build,
		// Off Linux neither io_uring nor its epoll fallback exists, and
		// checking a configuration that names the driver says so at
		// driver.kind. On Linux the kernel decides when the driver is
		// built, and the fallback key says what then. It has no default
		// rank: a runtime uses it only when driver.kind names it.
		core.AvailableWhen(available))
}
