// Command peerratios prints the peer table of the README from the raw
// outputs of one pass of scripts/peers.sh: medians of every round, the
// peer's time over Weft's, and each goal of the performance issue met or
// missed. It computes what was once worked out by hand, so a figure in the
// README is the output of a command.
//
//	go run ./scripts/peerratios DIR
//
// DIR holds weft.txt and eino.txt (go test -bench output, the rounds one
// after the other) and langgraphjs.txt (bench.mjs output: a JSON line per
// scenario and run).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: peerratios DIR (the raw outputs of scripts/peers.sh)")
		os.Exit(2)
	}
	met, err := run(os.Stdout, os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerratios:", err)
		os.Exit(1)
	}
	if !met {
		os.Exit(3) // the table is printed; a goal was missed
	}
}

// row is one line of the table: a Weft benchmark, what it is compared
// with, and the goals (0: none).
type row struct {
	weft       string // benchmark name without "Benchmark" and the -N suffix
	lg         lgPick // zero: no LangGraph.js figure
	eino       string // Eino sub-benchmark; "": none
	goalLG     float64
	goalEino   float64
	comparedAs string // what the peer figure is, when not obvious
}

// lgPick is a figure of a LangGraph.js scenario's JSON line, in µs.
type lgPick struct {
	scenario, field string
	scale           float64 // the field's unit in µs
}

var rows = []row{
	{weft: "B1Chain10", lg: lgPick{"chain10-nocp", "per_unit_us", 1}, eino: "chain10-nocp", goalLG: 10, goalEino: 4},
	{weft: "B2Chain10Memory", lg: lgPick{"chain10-memsaver", "per_unit_us", 1}, goalLG: 10},
	{weft: "B3Chain10SQLite", lg: lgPick{"chain10-sqlite", "per_unit_us", 1}, goalLG: 10},
	{weft: "B3Chain10SQLiteSync", lg: lgPick{"chain10-sqlite", "per_unit_us", 1}, comparedAs: "against LangGraph.js's async"},
	{weft: "B4FanoutSend200", lg: lgPick{"fanout-send", "per_unit_us", 1}, eino: "fanout", goalLG: 10, comparedAs: "Eino: a static fan-out (it has no Send)"},
	{weft: "B5Loop1000", eino: "loop-1000"},
	{weft: "B5Loop1000SQLite", lg: lgPick{"loop-1000", "total_ms", 1000}, goalLG: 10},
	{weft: "B5History", lg: lgPick{"loop-1000", "history_ms", 1000}, goalLG: 10},
	{weft: "B5GetState", lg: lgPick{"loop-1000", "getstate_avg_ms", 1000}, goalLG: 3, comparedAs: "LangGraph.js: mean of 100 calls"},
	{weft: "B6InterruptResume", lg: lgPick{"interrupt-resume", "per_unit_us", 1}, eino: "interrupt-resume", goalLG: 10},
	{weft: "B7WideStateSQLite", lg: lgPick{"wide-state", "per_unit_us", 1}, goalLG: 10},
}

// run prints the table for the outputs in dir and reports whether every
// goal was met.
func run(w io.Writer, dir string) (bool, error) {
	weft, err := readGoBench(filepath.Join(dir, "weft.txt"), "Benchmark")
	if err != nil {
		return false, err
	}
	eino, err := readGoBench(filepath.Join(dir, "eino.txt"), "BenchmarkEino/")
	if err != nil {
		return false, err
	}
	lg, err := readLangGraph(filepath.Join(dir, "langgraphjs.txt"))
	if err != nil {
		return false, err
	}
	fmt.Fprintln(w, "| Weft benchmark | Weft | LangGraph.js | × | Eino | × | goal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	all := true
	for _, r := range rows {
		ws, ok := weft[r.weft]
		if !ok {
			return false, fmt.Errorf("weft.txt has no Benchmark%s", r.weft)
		}
		mw := median(ws)
		cells := []string{"`" + r.weft + "`", fmt.Sprintf("%s (%d runs)", us(mw), len(ws))}
		var goals []string
		compare := func(peer []float64, goal float64, who string) {
			if len(peer) == 0 {
				cells = append(cells, "—", "")
				return
			}
			x := median(peer) / mw
			cells = append(cells, fmt.Sprintf("%s (%d runs)", us(median(peer)), len(peer)), fmt.Sprintf("%.1f×", x))
			if goal > 0 {
				verdict := "met"
				if x < goal {
					verdict, all = "**missed**", false
				}
				goals = append(goals, fmt.Sprintf("≥ %g× %s: %s", goal, who, verdict))
			}
		}
		var lgVals []float64
		if r.lg.scenario != "" {
			for _, rec := range lg[r.lg.scenario] {
				v, ok := rec[r.lg.field]
				if !ok {
					return false, fmt.Errorf("langgraphjs.txt: scenario %s has no %s", r.lg.scenario, r.lg.field)
				}
				lgVals = append(lgVals, v*r.lg.scale)
			}
			if len(lgVals) == 0 {
				return false, fmt.Errorf("langgraphjs.txt has no scenario %s", r.lg.scenario)
			}
		}
		compare(lgVals, r.goalLG, "LangGraph.js")
		var einoVals []float64
		if r.eino != "" {
			if einoVals = eino[r.eino]; len(einoVals) == 0 {
				return false, fmt.Errorf("eino.txt has no BenchmarkEino/%s", r.eino)
			}
		}
		compare(einoVals, r.goalEino, "Eino")
		goal := strings.Join(goals, "; ")
		if r.comparedAs != "" {
			goal = strings.TrimPrefix(goal+"; "+r.comparedAs, "; ")
		}
		cells = append(cells, goal)
		fmt.Fprintln(w, "| "+strings.Join(cells, " | ")+" |")
	}
	if all {
		fmt.Fprintln(w, "\nEvery goal met in this pass.")
	} else {
		fmt.Fprintln(w, "\nNot every goal met in this pass.")
	}
	return all, nil
}

// readGoBench returns the ns/op of every line of go test -bench output
// whose name starts with prefix, by name without the prefix and the -N
// suffix, in µs.
func readGoBench(path, prefix string) (map[string][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]float64{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || !strings.HasPrefix(fields[0], prefix) || fields[3] != "ns/op" {
			continue
		}
		name := strings.TrimPrefix(fields[0], prefix)
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		ns, err := strconv.ParseFloat(fields[2], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: ns/op %q: %w", path, n, fields[2], err)
		}
		out[name] = append(out[name], ns/1000)
	}
	return out, sc.Err()
}

// readLangGraph returns the numeric fields of every JSON line of a
// bench.mjs output, by scenario.
func readLangGraph(path string) (map[string][]map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]map[string]float64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		name, _ := rec["scenario"].(string)
		if name == "" {
			return nil, fmt.Errorf("%s:%d: a line without a scenario", path, n)
		}
		nums := map[string]float64{}
		for k, v := range rec {
			if x, ok := v.(float64); ok {
				nums[k] = x
			}
		}
		out[name] = append(out[name], nums)
	}
	return out, sc.Err()
}

func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// us formats a time in µs with a unit that keeps three figures or so.
func us(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.1f ms", v/1000)
	case v >= 100:
		return fmt.Sprintf("%.0f µs", v)
	default:
		return fmt.Sprintf("%.2f µs", v)
	}
}
