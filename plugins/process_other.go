//go:build !unix

package plugins

import "os/exec"

// tieToHost does nothing here: neither process groups nor inherited pipes
// are available.
func tieToHost(*exec.Cmd) {}

func killGroup(int) {}
