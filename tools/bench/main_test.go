package bench_test

import (
	"os"
	"testing"

	"github.com/weftrt/weft/tools/internal/echo"
)

func TestMain(m *testing.M) {
	// W8 and W9 run their echo servers in a child process: this test
	// binary, started again.
	echo.ServeChildIfRequested()
	os.Exit(m.Run())
}
