package engine

import "fmt"

// This file is the choice of reference: which LangGraph the engine follows
// where Python LangGraph and LangGraph.js behave differently (the package
// documentation lists those behaviours, B1–B11).

// Reference names the LangGraph whose behaviour a graph follows where the
// two LangGraphs disagree. The zero value is LangGraphPython, the default.
type Reference int

const (
	// LangGraphPython follows Python LangGraph (1.1.3, as the differential
	// suite's python-expected documents record it). The default.
	LangGraphPython Reference = iota
	// LangGraphJS follows LangGraph.js (1.7.3, the suite's expected
	// documents).
	LangGraphJS
)

// String names the reference: "python" or "js".
func (r Reference) String() string {
	switch r {
	case LangGraphPython:
		return "python"
	case LangGraphJS:
		return "js"
	}
	return fmt.Sprintf("Reference(%d)", int(r))
}

// WithReference makes the graph follow reference r where the LangGraphs
// disagree (see the package documentation); without it a graph follows
// Python LangGraph. A subgraph runs as the root graph it is part of says,
// whatever it was compiled with, so one run follows one reference.
func WithReference(r Reference) CompileOption {
	return func(c *compileConfig) { c.reference = r }
}

// Reference reports the reference the graph was compiled to follow.
func (gr *Graph) Reference() Reference { return gr.reference }

// reference is the reference of the run: the root graph's.
func (rt *runtime) reference() Reference {
	for p := rt; ; p = p.cfg.parentRT {
		if p.cfg.parentRT == nil {
			return p.g.reference
		}
	}
}

// js reports whether the run follows LangGraph.js.
func (rt *runtime) js() bool { return rt.reference() == LangGraphJS }
