package echo

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is the unit of the CPU times in /proc/PID/stat (USER_HZ),
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// childrenCPU sums the user and system CPU time of the running processes
// whose parent is this one, from /proc/PID/stat. The resolution is a clock
// tick (10 ms), fine for a measured interval of seconds.
func childrenCPU() time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	var ticks int64
	for _, path := range stats {
		raw, err := os.ReadFile(path)
		if err != nil {
			continue // exited since the glob
		}
		// The command name (field 2) is in parentheses and may hold
		// spaces; the fields after its closing parenthesis start with the
		// state (field 3): ppid is field 4, utime 14 and stime 15.
		s := string(raw)
		end := strings.LastIndexByte(s, ')')
		if end < 0 {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid != self {
			continue
		}
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += utime + stime
	}
	return time.Duration(ticks) * time.Second / clockTicks
}
