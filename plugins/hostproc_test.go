package plugins_test

import (
	"bufio"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/weftrt/weft/plugins"
)

// The tests of a plugin's life after its host's end run the test binary
// itself as the host: TestMain sees hostEnv and calls runHost instead of
// the tests.
const (
	hostEnv       = "WEFT_PLUGINS_TEST_HOST"        // the ties: both, lifeline, deathsignal
	hostPluginEnv = "WEFT_PLUGINS_TEST_HOST_PLUGIN" // the driver plugin to start
)

// runHost starts a driver plugin, prints "plugin <pid>", then reads one
// line from its standard input: "fatal" ends it through log.Fatal, "exit"
// through os.Exit; otherwise it waits to be killed.
func runHost(ties string) int {
	switch ties {
	case "lifeline":
		plugins.SetHostTies(true, false)
	case "deathsignal":
		plugins.SetHostTies(false, true)
	case "both":
	default:
		fmt.Fprintf(os.Stderr, "unknown ties %q\n", ties)
		return 2
	}
	d, err := plugins.NewDriver(plugins.DriverOptions{Launch: plugins.LaunchConfig{
		Path: os.Getenv(hostPluginEnv), InsecureSkipChecksum: true,
	}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	info, ok := d.Info()
	if !ok {
		fmt.Fprintln(os.Stderr, "the plugin is not running")
		return 2
	}
	fmt.Printf("plugin %d\n", info.PID)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	switch strings.TrimSpace(line) {
	case "fatal":
		log.Fatal("the host ends through log.Fatal")
	case "exit":
		os.Exit(3)
	}
	select {} // the test kills the process
}
