package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

// Report is a whole run of the benchmarks: where, when, how, and the
// results. WriteTable prints it for people, WriteJSON for programs.
type Report struct {
	Machine      Machine
	Date         time.Time
	Command      string // the command line that produced it
	Runs         int
	Scale        float64 // 1 (or 0) for the specification's sizes
	Compositions []Composition
	Results      []Result
}

// WriteTable prints a header naming the machine and the compositions, then
// one row per result: id, name, unit, the median [min–max] of the first
// composition, the median of each other one, plain Go's median [min–max],
// the ratio, the target and whether it is met (or why the row has no
// figures).
func (rep *Report) WriteTable(w io.Writer) error {
	var b bytes.Buffer
	m := rep.Machine
	fmt.Fprintf(&b, "%s, %d cores, GOMAXPROCS %d, %s %s/%s", m.CPU, m.Cores, m.GOMAXPROCS, m.Go, m.OS, m.Arch)
	if m.LoadStart != "" {
		fmt.Fprintf(&b, ", load %s", m.LoadStart)
		if m.LoadEnd != "" {
			fmt.Fprintf(&b, " -> %s", m.LoadEnd)
		}
	}
	runs := "runs"
	if rep.Runs == 1 {
		runs = "run"
	}
	fmt.Fprintf(&b, "\n%d %s each after a warm-up; median [min–max]; ratio = go/weft for times, weft/go for rates (higher is better; rounded down)\n", rep.Runs, runs)
	if rep.Scale != 0 && rep.Scale != 1 {
		fmt.Fprintf(&b, "sizes scaled by %g: not the specification's figures\n", rep.Scale)
	}
	for _, c := range rep.Compositions {
		fmt.Fprintf(&b, "%s: %s\n", c.Name, describe(c.Comp))
	}
	fmt.Fprintln(&b, "go: goroutines, channels and runtime timers")
	fmt.Fprintln(&b)

	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	header := []string{"ID", "NAME", "UNIT", strings.ToUpper(rep.Compositions[0].Name)}
	for _, c := range rep.Compositions[1:] {
		header = append(header, strings.ToUpper(c.Name))
	}
	header = append(header, "GO", "RATIO", "TARGET", "MET")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for i := range rep.Results {
		r := &rep.Results[i]
		wl := r.Workload
		row := []string{wl.ID, wl.Name, wl.Unit}
		target := wl.Target.String(r.Ideal, wl.Unit)
		if target != "" && r.TargetElsewhere {
			target += " on " + wl.TargetDriver
		}
		if !r.Measured() {
			for range len(rep.Compositions) + 2 {
				row = append(row, "-")
			}
			why := "skipped: " + r.Skipped
			if r.Err != nil {
				why = "failed: " + r.Err.Error()
			}
			row = append(row, target, why)
		} else {
			row = append(row, withRange(r.Weft[0]))
			for _, s := range r.Weft[1:] {
				if len(s.Runs) == 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, FormatFigure(s.Median))
			}
			met := "-"
			if wl.Target.Kind != NoTarget && !r.TargetElsewhere {
				met = yesNo(r.Met())
			}
			row = append(row, withRange(r.Go), formatRatio(r.Ratio), target, met)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	_, err := w.Write(b.Bytes())
	return err
}

// describe summarises a composition by the module of each kind:
// "scheduler currentthread, timer wheel, driver none, clock real".
func describe(comp *config.Composition) string {
	var parts []string
	for _, k := range []core.Kind{core.KindScheduler, core.KindTimer, core.KindDriver, core.KindClock} {
		parts = append(parts, fmt.Sprintf("%s %s", k, comp.Selection(k).Name))
	}
	return strings.Join(parts, ", ")
}

func withRange(s Stats) string {
	return fmt.Sprintf("%s [%s–%s]", FormatFigure(s.Median), FormatFigure(s.Min), FormatFigure(s.Max))
}

// FormatFigure prints a figure with three significant digits, or as an
// integer from 100 up.
func FormatFigure(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// formatRatio prints a ratio rounded down to two decimals, so that a
// ratio printed at its target has met it.
func formatRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "?"
	}
	return fmt.Sprintf("%.2fx", math.Floor(r*100)/100)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// WriteJSON writes the report as one JSON object:
//
//	{"machine": {...}, "date": ..., "command": ..., "runs": 5,
//	 "config": {"runtime.name": "weft", ..., "scheduler.kind": ...},
//	 "compare": {"currentthread": {"scheduler.kind": "currentthread", ...}},
//	 "results": [{"id": "W1", "name": "spawn_local", "unit": "ns/task",
//	   "weft": median, "go": median, "weft_min": ..., "weft_max": ...,
//	   "go_min": ..., "go_max": ..., "ratio": ..., "currentthread": ...,
//	   "target": ">= 2.0x", "met": true, ...}]}
//
// "config" is the first composition's every effective key; "compare" holds,
// for each other composition, the keys of the sections in which it differs
// from the first (its scheduler, its timer or its driver), and their
// figures appear in each result under their name, for the workloads they
// run. A skipped or failed result has "skipped" or "error" instead of
// figures. A ratio that cannot be computed is null.
func (rep *Report) WriteJSON(w io.Writer) error {
	first := rep.Compositions[0]
	compare := object{}
	for _, c := range rep.Compositions[1:] {
		compare = append(compare, field{c.Name, differingSections(first.Comp, c.Comp)})
	}
	results := make([]object, len(rep.Results))
	for i := range rep.Results {
		results[i] = rep.resultObject(&rep.Results[i])
	}
	doc := object{
		{"machine", rep.Machine},
		{"date", rep.Date.UTC().Format(time.RFC3339)},
		{"command", rep.Command},
		{"runs", rep.Runs},
	}
	if rep.Scale != 0 && rep.Scale != 1 {
		doc = append(doc, field{"scale", rep.Scale})
	}
	doc = append(doc,
		field{"config", settingsObject(first.Comp.Settings(), "")},
		field{"compare", compare},
		field{"results", results},
	)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func (rep *Report) resultObject(r *Result) object {
	wl := r.Workload
	o := object{{"id", wl.ID}, {"name", wl.Name}, {"unit", wl.Unit}, {"size", r.N}}
	if wl.Better == HigherIsBetter {
		o = append(o, field{"better", "higher"})
	} else {
		o = append(o, field{"better", "lower"})
	}
	if t := wl.Target.String(r.Ideal, wl.Unit); t != "" {
		o = append(o, field{"target", t})
	}
	if r.Ideal > 0 {
		o = append(o, field{"ideal", r.Ideal})
	}
	switch {
	case r.Err != nil:
		return append(o, field{"error", r.Err.Error()})
	case !r.Measured():
		return append(o, field{"skipped", r.Skipped})
	}
	weft := r.Weft[0]
	o = append(o,
		field{"weft", weft.Median}, field{"go", r.Go.Median},
		field{"weft_min", weft.Min}, field{"weft_max", weft.Max},
		field{"go_min", r.Go.Min}, field{"go_max", r.Go.Max},
		field{"ratio", finite(r.Ratio)},
	)
	if wl.Target.Kind != NoTarget && !r.TargetElsewhere {
		o = append(o, field{"met", r.Met()})
	}
	for i, c := range rep.Compositions[1:] {
		s := r.Weft[i+1]
		if len(s.Runs) == 0 {
			continue
		}
		o = append(o,
			field{c.Name, s.Median}, field{c.Name + "_min", s.Min}, field{c.Name + "_max", s.Max},
			field{c.Name + "_ratio", finite(r.Ratios[i+1])},
		)
	}
	o = append(o, field{"weft_runs", weft.Runs}, field{"go_runs", r.Go.Runs})
	return o
}

// differingSections returns, as a JSON object, every setting of the
// sections (scheduler, timer, ...) in which c differs from first.
func differingSections(first, c *config.Composition) object {
	base := map[string]string{}
	for _, s := range first.Settings() {
		base[s.Key] = s.ValueString()
	}
	differs := map[string]bool{}
	settings := c.Settings()
	for _, s := range settings {
		if v, ok := base[s.Key]; !ok || v != s.ValueString() {
			differs[section(s.Key)] = true
		}
	}
	o := object{}
	for _, s := range settingsObject(settings, "") {
		if differs[section(s.key)] {
			o = append(o, s)
		}
	}
	return o
}

func section(key string) string {
	if i := strings.IndexByte(key, '.'); i >= 0 {
		return key[:i]
	}
	return key
}

// finite returns v, or nil (JSON null) for NaN and infinities, which JSON
// cannot carry.
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// settingsObject returns the settings whose keys start with prefix as a
// JSON object: numbers, booleans and strings as themselves, anything else
// (durations, lists) as written in a configuration file.
func settingsObject(settings []config.Setting, prefix string) object {
	o := object{}
	for _, s := range settings {
		if !strings.HasPrefix(s.Key, prefix) {
			continue
		}
		var v any = s.ValueString()
		switch reflect.ValueOf(s.Value).Kind() {
		case reflect.Bool, reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
			v = s.Value
		case reflect.Int64:
			if _, isDuration := s.Value.(time.Duration); !isDuration {
				v = s.Value
			}
		}
		o = append(o, field{s.Key, v})
	}
	return o
}

// object is a JSON object that keeps its fields in order.
type object []field

type field struct {
	key   string
	value any
}

// MarshalJSON implements json.Marshaler.
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encode(&b, f.key); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := encode(&b, f.value); err != nil {
			return nil, fmt.Errorf("field %q: %w", f.key, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encode appends v's JSON to b, leaving "<" and ">" as they are (targets
// read ">= 2.0x").
func encode(b *bytes.Buffer, v any) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}
