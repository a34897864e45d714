package engine_test

// The LangGraph differential suite: every scenario in
// testdata/oracle/scenarios is built and run with the engine's public API,
// and the document of what the engine did is compared with what each
// LangGraph did with the same scenario: LangGraph.js 1.7.3
// (testdata/oracle/expected, TestOracle, graphs compiled with
// WithReference(LangGraphJS)) and Python LangGraph 1.1.3
// (testdata/oracle/python-expected, TestOraclePython, the default
// reference). testdata/oracle/DSL.md describes the scenarios.
//
//	go test ./engine -run 'TestOracle/NAME' -v   one scenario, with its diff
//	go test ./engine -run TestOracle -v | grep oracle:
//	                                             the counts, per reference
//	WEFT_ORACLE_DUMP=dir go test ./engine -run TestOracle
//	                                             also writes the engine's
//	                                             normalized documents to dir
//
// A difference fails the scenario unless testdata/oracle/allow.json accepts
// exactly that difference: a deliberate difference, from one reference or
// both, named in the package documentation. An entry that no longer matches
// fails too.
//
// A feature only Python LangGraph has (managed values) cannot be recorded
// with LangGraph.js: its runner writes a document that says so
// ("notInLangGraphJS", with the reason) instead of running the scenario.
// Under LangGraph.js such a scenario is still run (it must not fail), but
// compared with nothing; the counts list it apart.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/weftstudio/weft/engine"
)

const oracleDir = "testdata/oracle"

// allowEntry accepts differences between a LangGraph (or both) and the
// engine where the engine differs on purpose.
type allowEntry struct {
	Scenario string `json:"scenario"`
	// Reference is the reference whose document the entry is about
	// ("python" or "js", as engine.Reference.String names them); "" is both.
	Reference string `json:"reference,omitempty"`
	Behaviour string `json:"behaviour"`
	// Doc is the title of the item of the package documentation's list of
	// deliberate differences that explains the difference.
	Doc string `json:"doc"`
	// Differences are the accepted values: at Path, the reference's
	// document (each reference's, for an entry about both) holds Expected
	// and the engine's holds Got (compared with the suite's usual leniency).
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
		if e.Reference != "" && e.Reference != engine.LangGraphJS.String() && e.Reference != engine.LangGraphPython.String() {
			t.Errorf("allow.json entry %d: reference %q is neither %q nor %q", i, e.Reference, engine.LangGraphJS, engine.LangGraphPython)
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
	orcNotInRef // the reference has no such feature: nothing to compare
)

// notInJSKey is the field of a LangGraph.js document recorded for a
// scenario LangGraph.js cannot express; its value says why.
const notInJSKey = "notInLangGraphJS"

// oracleReference is one reference the suite compares with: the engine
// option, the folder of its recorded documents and how to record one.
type oracleReference struct {
	ref  engine.Reference
	dir  string
	name string // in messages: "LangGraph.js", "Python LangGraph"
	hint string
}

var (
	oracleJS     = oracleReference{engine.LangGraphJS, "expected", "LangGraph.js", "record it with scripts/oracle-record.sh"}
	oraclePython = oracleReference{engine.LangGraphPython, "python-expected", "Python LangGraph", "record it with scripts/oracle-record.sh --python"}
)

func TestOracle(t *testing.T) { oracleSuite(t, oracleJS) }

func TestOraclePython(t *testing.T) { oracleSuite(t, oraclePython) }

// oracleSuite runs every scenario with the graphs following r.ref and
// compares each document with r's recorded one.
func oracleSuite(t *testing.T, r oracleReference) {
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
	expected, _ := filepath.Glob(filepath.Join(oracleDir, r.dir, "*.json"))
	for _, f := range expected {
		if n := strings.TrimSuffix(filepath.Base(f), ".json"); !names[n] {
			t.Errorf("%s/%s.json has no scenario", r.dir, n)
		}
	}
	dump := os.Getenv("WEFT_ORACLE_DUMP")
	if dump != "" {
		dump = filepath.Join(dump, r.ref.String())
		if err := os.MkdirAll(dump, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outcomes := map[string]orcOutcome{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		var entries []allowEntry
		for _, e := range allow {
			if e.Scenario == name && (e.Reference == "" || e.Reference == r.ref.String()) {
				entries = append(entries, e)
			}
		}
		t.Run(name, func(t *testing.T) {
			outcomes[name] = orcDiffers // until it compared
			outcomes[name] = runOracleScenario(t, name, r, entries, dump)
		})
	}
	var equal, allowed int
	var differ, absent []string
	for name, o := range outcomes {
		switch o {
		case orcEqual:
			equal++
		case orcAllowed:
			allowed++
		case orcNotInRef:
			absent = append(absent, name)
		default:
			differ = append(differ, name)
		}
	}
	sort.Strings(differ)
	sort.Strings(absent)
	summary := fmt.Sprintf("oracle: %s: %d of %d equal", r.name, equal+allowed, len(outcomes)-len(absent))
	if allowed > 0 {
		summary += fmt.Sprintf(" (%d through allow-list entries)", allowed)
	}
	if len(differ) > 0 {
		summary += fmt.Sprintf("; %d differ: %s", len(differ), strings.Join(differ, ", "))
	}
	if len(absent) > 0 {
		summary += fmt.Sprintf("; %d not in %s (Python LangGraph only, run but not compared): %s", len(absent), r.name, strings.Join(absent, ", "))
	}
	t.Log(summary)
}

func runOracleScenario(t *testing.T, name string, r oracleReference, entries []allowEntry, dump string) orcOutcome {
	run, exp, got := runAgainst(t, name, r.dir, r.hint+" "+name, r.ref)
	if dump != "" {
		if err := os.WriteFile(filepath.Join(dump, name+".json"), prettyJSON(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if o, ok, problem := notInReference(name, r, exp, run.builder.pythonOnly); ok {
		if problem != "" {
			t.Error(problem)
		} else {
			t.Logf("%s: not in %s (%v); the engine ran it under WithReference(LangGraphJS), nothing compared", name, r.name, exp.(map[string]any)[notInJSKey])
		}
		return o
	}

	c := newComparer(run.meta)
	var problems []string
	for i, e := range entries {
		status, detail := applyAllow(e, r.name, exp, got, c.skip)
		switch status {
		case "stale":
			problems = append(problems, fmt.Sprintf("allow.json entry %d for %s is stale: %s; remove it", i, name, detail))
		case "unmatched":
			problems = append(problems, fmt.Sprintf("allow.json entry %d for %s does not match what the engine did:\n    %s", i, name, detail))
		}
	}
	c.cmp("", exp, got)
	for _, p := range problems {
		t.Error(p)
	}
	if len(c.diffs) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %d difference(s) from %s (path, expected, got):\n", name, len(c.diffs), r.name)
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

// notInReference handles a document that says its reference cannot
// express the scenario (notInJSKey): only LangGraph.js's may, only for a
// scenario that uses a Python-only feature (pythonOnly, found by the
// builder). handled is false for an ordinary document: compare it. A
// scenario using a Python-only feature with an ordinary LangGraph.js
// document is a problem too: that document would be a recording of
// something LangGraph.js does not have. problem is "" when all is well.
func notInReference(name string, r oracleReference, exp any, pythonOnly []string) (o orcOutcome, handled bool, problem string) {
	doc, _ := exp.(map[string]any)
	why, marked := doc[notInJSKey]
	switch {
	case !marked && (r.ref != engine.LangGraphJS || len(pythonOnly) == 0):
		return 0, false, ""
	case !marked:
		return orcDiffers, true, fmt.Sprintf("%s uses %s, which LangGraph.js does not have, but %s/%s.json is an ordinary document; record it again with the project's runner.mjs", name, strings.Join(pythonOnly, ", "), r.dir, name)
	case r.ref != engine.LangGraphJS:
		return orcDiffers, true, fmt.Sprintf("%s/%s.json says %s: %v; only a LangGraph.js document may", r.dir, name, notInJSKey, why)
	case len(pythonOnly) == 0:
		return orcDiffers, true, fmt.Sprintf("%s/%s.json says %s: %v; but the scenario uses no Python-only feature: record it again", r.dir, name, notInJSKey, why)
	}
	return orcNotInRef, true, ""
}

// applyAllow checks an allow-list entry against both documents: "applied"
// (its paths go into skip), "stale" (the reference's document, named ref,
// no longer holds what it says, or the engine now does what the reference
// does) or "unmatched" (the engine does something else again).
func applyAllow(e allowEntry, ref string, exp, got any, skip map[string]bool) (status, detail string) {
	applied := true
	var details []string
	for _, d := range e.Differences {
		ev, ok := getPath(exp, d.Path)
		if !ok {
			return "stale", fmt.Sprintf("%s's document has nothing at %s", ref, d.Path)
		}
		if !sameDoc(d.Expected, ev) {
			return "stale", fmt.Sprintf("%s's document holds %s at %s", ref, compactOf(ev), d.Path)
		}
		gv, ok := getPath(got, d.Path)
		if !ok {
			gv = orcMissing
		}
		if ok && sameDoc(ev, gv) {
			return "stale", fmt.Sprintf("the engine now does what %s does at %s", ref, d.Path)
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
// documentation's list of deliberate differences, and the list of what
// WithReference selects names the behaviours B1–B11 in order.
func TestOracleAllowListMatchesDoc(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	sections := docListTitles(string(src))
	deliberate := sections["Deliberate differences from LangGraph"]
	if len(deliberate) == 0 {
		t.Fatalf("doc.go has no list of deliberate differences: %v", sections)
	}
	for i, e := range loadAllow(t) {
		if !slices.Contains(deliberate, e.Doc) {
			t.Errorf("allow.json entry %d (%s): doc %q is not an item of doc.go's list of deliberate differences (%v)", i, e.Scenario, e.Doc, deliberate)
		}
	}
	refs := sections["Where the LangGraphs disagree: WithReference"]
	if len(refs) != 11 {
		t.Fatalf("doc.go's WithReference list has %d items, want B1–B11: %v", len(refs), refs)
	}
	for i, title := range refs {
		if want := fmt.Sprintf("B%d ", i+1); !strings.HasPrefix(title, want) {
			t.Errorf("doc.go's WithReference item %d is %q, want it to start with %q", i+1, title, want)
		}
	}
}

// docListTitles returns, per "# Heading" of a package comment, the titles
// of its list items ("//   - Title: text"), in order.
func docListTitles(src string) map[string][]string {
	out := map[string][]string{}
	cur := ""
	for _, line := range strings.Split(src, "\n") {
		if h, ok := strings.CutPrefix(line, "// # "); ok {
			cur = h
			out[h] = nil
			continue
		}
		if item, ok := strings.CutPrefix(line, "//   - "); ok && cur != "" {
			if title, _, ok := strings.Cut(item, ":"); ok {
				out[cur] = append(out[cur], title)
			}
		}
	}
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
