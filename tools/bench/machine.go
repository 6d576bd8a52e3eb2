package bench

import (
	"bufio"
	"os"
	"runtime"
	"strings"
)

// Machine describes where the figures were measured.
type Machine struct {
	CPU        string `json:"cpu"`
	Cores      int    `json:"cores"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	// LoadStart and LoadEnd are the 1, 5 and 15 minute load averages
	// before and after the benchmarks (Linux only): on a shared machine
	// they say how much else was running.
	LoadStart string `json:"load_start,omitempty"`
	LoadEnd   string `json:"load_end,omitempty"`
}

// ProbeMachine describes the machine running it; LoadEnd is left for the
// caller to fill in with [LoadAverage] when it is done.
func ProbeMachine() Machine {
	return Machine{
		CPU:        cpuModel(),
		Cores:      runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Go:         runtime.Version(),
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		LoadStart:  LoadAverage(),
	}
}

// LoadAverage returns the 1, 5 and 15 minute load averages from
// /proc/loadavg, or "" where there is none.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// cpuModel returns the CPU's model name from /proc/cpuinfo, or the
// architecture where there is none.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		key, value, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return runtime.GOARCH
}
