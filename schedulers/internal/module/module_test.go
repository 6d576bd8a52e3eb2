package module_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/module"
)

func TestProblemsNameEveryInvalidKeyInOrder(t *testing.T) {
	var p module.Problems
	p.AtLeast("fine", 1, 1)
	p.AtLeast("workers", 0, 1)
	p.Add("cpus.2", "CPU %d is listed twice", 3)
	err := p.Err()
	if err == nil {
		t.Fatal("no error for two invalid keys")
	}
	var keys []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *core.ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *core.ConfigError", e)
		}
		keys = append(keys, ce.Key)
	}
	if strings.Join(keys, ",") != "workers,cpus.2" {
		t.Fatalf("keys %v, want workers then cpus.2", keys)
	}
	if !strings.Contains(err.Error(), `"workers": must be >= 1, got 0`) {
		t.Fatalf("message %q does not say what is wrong", err)
	}
	var none module.Problems
	none.AtLeast("fine", 5, 1)
	if none.Err() != nil {
		t.Fatal("a valid configuration has problems")
	}
}

type testConfig struct{ N int }

func (c *testConfig) Validate() error {
	var p module.Problems
	p.AtLeast("n", c.N, 1)
	return p.Err()
}

func TestCheckRefusesAnInvalidConfigAndAMissingTaskSet(t *testing.T) {
	var ce *core.ConfigError
	if err := module.Check("test", &testConfig{N: 0}, core.SchedulerParams{Tasks: core.NewTaskSet(nil)}); !errors.As(err, &ce) || ce.Key != "n" {
		t.Fatalf("invalid config: %v, want the config error for n", err)
	}
	if err := module.Check("test", &testConfig{N: 1}, core.SchedulerParams{}); err == nil || !strings.HasPrefix(err.Error(), "test: ") {
		t.Fatalf("no task set: %v, want an error naming the scheduler", err)
	}
	if err := module.Check("test", &testConfig{N: 1}, core.SchedulerParams{Tasks: core.NewTaskSet(nil)}); err != nil {
		t.Fatal(err)
	}
}
