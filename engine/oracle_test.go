package engine_test

// The LangGraph differential suite: every scenario in
// testdata/oracle/scenarios is built and run with the engine's public API,
// and the document of what the engine did is compared with what LangGraph.js
// 1.7.3 did with the same scenario (testdata/oracle/expected, recorded by the
// oracle's runner; testdata/oracle/DSL.md describes both).
//
//	go test ./engine -run 'TestOracle/NAME' -v   one scenario, with its diff
//	WEFT_ORACLE_DUMP=dir go test ./engine -run TestOracle
//	                                             also writes the engine's
//	                                             normalized documents to dir
//
// A difference fails the scenario unless testdata/oracle/allow.json accepts
// exactly that difference, naming the Python LangGraph source the engine
// follows instead of LangGraph.js. An entry that no longer matches fails too.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/engine"
)

const oracleDir = "testdata/oracle"

// allowEntry accepts differences between LangGraph.js and the engine where
// the engine follows Python LangGraph, or differs on purpose.
type allowEntry struct {
	Scenario  string `json:"scenario"`
	Behaviour string `json:"behaviour"`
	// Doc is the title of the package documentation's item that explains
	// the difference: in its list of where Weft follows Python, or, for a
	// Deliberate entry, in its list of deliberate differences.
	Doc        string `json:"doc"`
	Deliberate bool   `json:"deliberate,omitempty"`
	// Python names the source Weft follows; not for a Deliberate entry.
	Python struct {
		File     string `json:"file"`
		Function string `json:"function"`
	} `json:"python"`
	// Differences are the accepted values: at Path, LangGraph.js's document
	// holds Expected and the engine's holds Got (compared with the suite's
	// usual leniency).
	Differences []struct {
		Path     string `json:"path"`
		Expected any    `json:"expected"`
		Got      any    `json:"got"`
	} `json:"differences"`
}

func loadAllow(t *testing.T) []allowEntry {
	b, err := os.ReadFile(filepath.Join(oracleDir, "allow.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Entries []allowEntry `json:"entries"`
	}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("allow.json: %v", err)
	}
	for i, e := range f.Entries {
		if e.Scenario == "" || e.Behaviour == "" || e.Doc == "" || len(e.Differences) == 0 {
			t.Errorf("allow.json entry %d: needs scenario, behaviour, doc and differences", i)
		}
		if hasPython := e.Python.File != "" && e.Python.Function != ""; hasPython == e.Deliberate {
			t.Errorf("allow.json entry %d: needs python.file and python.function, or deliberate (not both)", i)
		}
		for _, d := range e.Differences {
			if d.Path == "" {
				t.Errorf("allow.json entry %d: a difference without a path", i)
			}
		}
	}
	return f.Entries
}

// orcOutcome is how one scenario compared.
type orcOutcome int

const (
	orcEqual   orcOutcome = iota // equal as recorded
	orcAllowed                   // equal once allow-list entries applied
	orcDiffers
)

func TestOracle(t *testing.T) {
	allow := loadAllow(t)
	files, err := filepath.Glob(filepath.Join(oracleDir, "scenarios", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		t.Fatal("no scenarios in " + oracleDir + "/scenarios")
	}
	names := map[string]bool{}
	for _, f := range files {
		names[strings.TrimSuffix(filepath.Base(f), ".json")] = true
	}
	for i, e := range allow {
		if !names[e.Scenario] {
			t.Errorf("allow.json entry %d names scenario %q, which does not exist", i, e.Scenario)
		}
	}
	expected, _ := filepath.Glob(filepath.Join(oracleDir, "expected", "*.json"))
	for _, f := range expected {
		if n := strings.TrimSuffix(filepath.Base(f), ".json"); !names[n] {
			t.Errorf("expected/%s.json has no scenario", n)
		}
	}
	dump := os.Getenv("WEFT_ORACLE_DUMP")
	if dump != "" {
		if err := os.MkdirAll(dump, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := map[string]orcOutcome{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		var entries []allowEntry
		for _, e := range allow {
			if e.Scenario == name {
				entries = append(entries, e)
			}
		}
		t.Run(name, func(t *testing.T) {
			outcomes[name] = orcDiffers // until it compared
			outcomes[name] = runOracleScenario(t, name, entries, dump)
		})
	}
	var equal, allowed int
	var differ []string
	for name, o := range outcomes {
		switch o {
		case orcEqual:
			equal++
		case orcAllowed:
			allowed++
		default:
			differ = append(differ, name)
		}
	}
	sort.Strings(differ)
	summary := fmt.Sprintf("oracle: %d of %d equal", equal+allowed, len(outcomes))
	if allowed > 0 {
		summary += fmt.Sprintf(" (%d through allow-list entries)", allowed)
	}
	if len(differ) > 0 {
		summary += fmt.Sprintf("; %d differ: %s", len(differ), strings.Join(differ, ", "))
	}
	t.Log(summary)
}

func runOracleScenario(t *testing.T, name string, entries []allowEntry, dump string) orcOutcome {
	run, exp, got := runAgainst(t, name, "expected", "record it with scripts/oracle-record.sh "+name, engine.LangGraphJS)
	if dump != "" {
		if err := os.WriteFile(filepath.Join(dump, name+".json"), prettyJSON(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	c := newComparer(run.meta)
	var problems []string
	for i, e := range entries {
		status, detail := applyAllow(e, exp, got, c.skip)
		switch status {
		case "stale":
			problems = append(problems, fmt.Sprintf("allow.json entry %d for %s is stale: %s; remove it", i, name, detail))
		case "unmatched":
			problems = append(problems, fmt.Sprintf("allow.json entry %d for %s (the engine should do what Python LangGraph does) does not match what the engine did:\n    %s", i, name, detail))
		}
	}
	c.cmp("", exp, got)
	for _, p := range problems {
		t.Error(p)
	}
	if len(c.diffs) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %d difference(s) from LangGraph.js (path, expected, got):\n", name, len(c.diffs))
		for i, d := range c.diffs {
			if i == 60 {
				fmt.Fprintf(&b, "  … %d more (WEFT_ORACLE_DUMP=dir writes the whole document)\n", len(c.diffs)-i)
				break
			}
			fmt.Fprintf(&b, "  %s\n", d)
		}
		t.Error(b.String())
	}
	switch {
	case len(c.diffs) > 0 || len(problems) > 0:
		return orcDiffers
	case len(c.skip) > 0:
		return orcAllowed
	}
	return orcEqual
}

// applyAllow checks an allow-list entry against both documents: "applied"
// (its paths go into skip), "stale" (LangGraph.js's document no longer
// holds what it says, or the engine now does what LangGraph.js does) or
// "unmatched" (the engine does something else again).
func applyAllow(e allowEntry, exp, got any, skip map[string]bool) (status, detail string) {
	applied := true
	var details []string
	for _, d := range e.Differences {
		ev, ok := getPath(exp, d.Path)
		if !ok {
			return "stale", fmt.Sprintf("LangGraph.js's document has nothing at %s", d.Path)
		}
		if !sameDoc(d.Expected, ev) {
			return "stale", fmt.Sprintf("LangGraph.js's document holds %s at %s", compactOf(ev), d.Path)
		}
		gv, ok := getPath(got, d.Path)
		if !ok {
			gv = orcMissing
		}
		if ok && sameDoc(ev, gv) {
			return "stale", fmt.Sprintf("the engine now does what LangGraph.js does at %s", d.Path)
		}
		if !ok {
			applied = false
			details = append(details, fmt.Sprintf("the engine's document has nothing at %s", d.Path))
			continue
		}
		c := newComparer(nil)
		c.cmp(d.Path, d.Got, gv)
		if len(c.diffs) > 0 {
			applied = false
			for i, df := range c.diffs {
				if i == 5 {
					details = append(details, fmt.Sprintf("… %d more", len(c.diffs)-i))
					break
				}
				details = append(details, fmt.Sprintf("at %s the entry says %s, the engine has %s", df.path, compactOf(df.expected), compactOf(df.got)))
			}
		}
	}
	if !applied {
		return "unmatched", strings.Join(details, "\n    ")
	}
	for _, d := range e.Differences {
		skip[d.Path] = true
	}
	return "applied", ""
}

// sameDoc compares two values with the suite's leniency.
func sameDoc(e, g any) bool {
	c := newComparer(nil)
	c.cmp("", e, g)
	return len(c.diffs) == 0
}

// TestOracleAllowListMatchesDoc checks that the package documentation and
// the allow-list tell the same story: every entry names an item of the
// documentation's list (Python-following or deliberate, as the entry is),
// and every item of the list of where Weft follows Python has an entry.
func TestOracleAllowListMatchesDoc(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	sections := docListTitles(string(src))
	python := sections["Where Weft follows Python LangGraph instead of LangGraph.js"]
	deliberate := sections["Deliberate differences from LangGraph"]
	if len(python) == 0 || len(deliberate) == 0 {
		t.Fatalf("doc.go lists: %v", sections)
	}
	used := map[string]bool{}
	for i, e := range loadAllow(t) {
		list := python
		if e.Deliberate {
			list = deliberate
		}
		if !list[e.Doc] {
			t.Errorf("allow.json entry %d (%s): doc %q is not an item of doc.go's list (%v)", i, e.Scenario, e.Doc, keys(list))
		}
		used[e.Doc] = true
	}
	for title := range python {
		if !used[title] {
			t.Errorf("doc.go says Weft follows Python in %q, but no allow.json entry shows it", title)
		}
	}
}

// docListTitles returns, per "# Heading" of a package comment, the titles
// of its list items ("//   - Title: text").
func docListTitles(src string) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	var cur map[string]bool
	for _, line := range strings.Split(src, "\n") {
		if h, ok := strings.CutPrefix(line, "// # "); ok {
			cur = map[string]bool{}
			out[h] = cur
			continue
		}
		if item, ok := strings.CutPrefix(line, "//   - "); ok && cur != nil {
			if title, _, ok := strings.Cut(item, ":"); ok {
				cur[title] = true
			}
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// runAgainst runs scenario name and returns its run, the reference
// document recorded under dir (expected/ for LangGraph.js, python-expected/
// for Python) and the engine's normalized document, the graphs compiled to
// follow ref. hint says how to record a missing reference.
func runAgainst(t *testing.T, name, dir, hint string, ref engine.Reference) (*orcRun, any, any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(oracleDir, "scenarios", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	sv, err := parseOrdered(data)
	if err != nil {
		t.Fatalf("scenario: %v", err)
	}
	scen, ok := sv.(*omap)
	if !ok {
		t.Fatal("scenario is not a JSON object")
	}
	expData, err := os.ReadFile(filepath.Join(oracleDir, dir, name+".json"))
	if err != nil {
		t.Fatalf("no recorded document in %s (%s): %v", dir, hint, err)
	}
	var exp any
	if err := json.Unmarshal(expData, &exp); err != nil {
		t.Fatalf("%s/%s.json: %v", dir, name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run, raw, idx, err := runScenario(ctx, name, scen, ref)
	if err != nil {
		var oe orcError
		if errors.As(err, &oe) {
			t.Fatalf("scenario bug: %v", err)
		}
		t.Fatalf("running the scenario: %v", err)
	}
	got, err := jsonData(finalize(raw, idx))
	if err != nil {
		t.Fatalf("the engine's document is not JSON: %v", err)
	}
	return run, exp, got
}
