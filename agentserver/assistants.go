package agentserver

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/weftstudio/weft/engine"
)

// assistant is one graph as LangGraph's Assistant object.
func (h *Handler) assistant(id string) map[string]any {
	ts := h.started.Format(timeFormat)
	return map[string]any{
		"assistant_id": id, "graph_id": id, "name": id, "description": nil, "version": 1,
		"config": map[string]any{}, "context": map[string]any{}, "metadata": map[string]any{"created_by": "system"},
		"created_at": ts, "updated_at": ts,
	}
}

// timeFormat is how times are written: RFC 3339 in UTC with milliseconds,
// as LangGraph's server writes them.
const timeFormat = "2006-01-02T15:04:05.000Z07:00"

func (h *Handler) searchAssistants(w http.ResponseWriter, r *http.Request) {
	var q struct {
		GraphID  string         `json:"graph_id"`
		Metadata map[string]any `json:"metadata"`
		Limit    int            `json:"limit"`
		Offset   int            `json:"offset"`
	}
	if !decode(w, r, &q) {
		return
	}
	out := []map[string]any{}
	for _, id := range h.matchAssistants(q.GraphID, q.Metadata) {
		out = append(out, h.assistant(id))
	}
	writeJSON(w, 200, page(out, q.Offset, q.Limit))
}

func (h *Handler) countAssistants(w http.ResponseWriter, r *http.Request) {
	var q struct {
		GraphID  string         `json:"graph_id"`
		Metadata map[string]any `json:"metadata"`
	}
	if !decode(w, r, &q) {
		return
	}
	writeJSON(w, 200, len(h.matchAssistants(q.GraphID, q.Metadata)))
}

// matchAssistants lists the assistant ids a search keeps.
func (h *Handler) matchAssistants(graphID string, md map[string]any) []string {
	var out []string
	for _, id := range h.ids {
		if graphID != "" && graphID != id {
			continue
		}
		if !subset(md, map[string]any{"created_by": "system"}) {
			continue
		}
		out = append(out, id)
	}
	return out
}

// page applies offset and limit (0: the default, 10, as LangGraph's).
func page[T any](xs []T, offset, limit int) []T {
	if limit <= 0 {
		limit = 10
	}
	if offset >= len(xs) {
		return []T{}
	}
	xs = xs[max(offset, 0):]
	return xs[:min(limit, len(xs))]
}

func (h *Handler) getAssistant(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("aid")
	if _, ok := h.graph(w, id); ok {
		writeJSON(w, 200, h.assistant(id))
	}
}

// getGraph draws the graph as LangGraph's drawable graph: nodes and edges,
// with ?xray inlining subgraphs (true: every level, a number: that many).
func (h *Handler) getGraph(w http.ResponseWriter, r *http.Request) {
	g, ok := h.graph(w, r.PathValue("aid"))
	if !ok {
		return
	}
	depth := 0
	switch x := r.URL.Query().Get("xray"); {
	case x == "" || x == "false":
	case x == "true":
		depth = -1
	default:
		n, err := strconv.Atoi(x)
		if err != nil || n < 0 {
			fail(w, http.StatusUnprocessableEntity, "xray must be true, false or a depth, not %q", x)
			return
		}
		depth = n
	}
	d := drawing{Nodes: []map[string]any{}, Edges: []map[string]any{}}
	d.add(g.Topology(), "", depth)
	writeJSON(w, 200, map[string]any{"nodes": d.Nodes, "edges": d.Edges})
}

type drawing struct {
	Nodes []map[string]any
	Edges []map[string]any
}

// add draws topology t with node ids prefixed by prefix ("" at the root)
// and returns, for an inlined subgraph, the ids its entry edges lead to
// and the ids its exit edges leave from.
func (d *drawing) add(t *engine.Topology, prefix string, depth int) (entries, exits []string) {
	inlined := map[string][2][]string{} // node → its subgraph's entries and exits
	for _, n := range t.Nodes {
		id := prefix + n.Name
		switch {
		case n.Kind != engine.NodeNormal:
			if prefix == "" {
				d.Nodes = append(d.Nodes, map[string]any{"id": n.Name, "type": "schema", "data": map[string]any{"$schema": "http://json-schema.org/draft-07/schema#"}})
			}
		case n.Subgraph != nil && depth != 0:
			en, ex := d.add(n.Subgraph, id+":", depth-1)
			inlined[n.Name] = [2][]string{en, ex}
		default:
			kind := "RunnableCallable"
			if n.Subgraph != nil {
				kind = "CompiledStateGraph"
			}
			d.Nodes = append(d.Nodes, map[string]any{"id": id, "type": "runnable",
				"data": map[string]any{"id": []string{"weft", kind}, "name": n.Name}, "metadata": map[string]any{}})
		}
	}
	seen := map[[2]string]bool{}
	for _, e := range t.Edges {
		from, to := []string{prefix + e.From}, []string{prefix + e.To}
		if sub, ok := inlined[e.From]; ok {
			from = sub[1]
		}
		if sub, ok := inlined[e.To]; ok {
			to = sub[0]
		}
		if prefix != "" {
			if e.From == engine.START {
				entries = append(entries, to...)
				continue
			}
			if e.To == engine.END {
				exits = append(exits, from...)
				continue
			}
		}
		cond := e.Kind == engine.EdgeConditional || e.Kind == engine.EdgeSend || e.Kind == engine.EdgeCommand
		for _, f := range from {
			for _, tt := range to {
				if seen[[2]string{f, tt}] {
					continue
				}
				seen[[2]string{f, tt}] = true
				d.Edges = append(d.Edges, map[string]any{"source": f, "target": tt, "conditional": cond})
			}
		}
	}
	return entries, exits
}

// getSchemas answers the state schema as JSON Schema draft-07, from the
// channels' Go types; input and output are the state schema (Weft graphs
// have one schema).
func (h *Handler) getSchemas(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("aid")
	g, ok := h.graph(w, id)
	if !ok {
		return
	}
	props := map[string]any{}
	for _, c := range g.Channels() {
		if c.Kind == "untracked" {
			continue
		}
		props[c.Name] = typeSchema(c.Type)
	}
	state := map[string]any{"type": "object", "properties": props, "$schema": "http://json-schema.org/draft-07/schema#"}
	empty := map[string]any{"type": "object", "$schema": "http://json-schema.org/draft-07/schema#"}
	writeJSON(w, 200, map[string]any{"graph_id": id, "input_schema": state, "output_schema": state,
		"state_schema": state, "config_schema": empty, "context_schema": empty})
}

// typeSchema turns a Go type's name into a JSON Schema; types it does not
// know are any value ({}).
func typeSchema(t string) map[string]any {
	if rest, ok := strings.CutPrefix(t, "[]"); ok {
		return map[string]any{"type": "array", "items": typeSchema(rest)}
	}
	switch t {
	case "string":
		return map[string]any{"type": "string"}
	case "bool":
		return map[string]any{"type": "boolean"}
	case "int", "int64", "int32", "uint", "uint64", "uint32":
		return map[string]any{"type": "integer"}
	case "float64", "float32":
		return map[string]any{"type": "number"}
	case "engine.Message":
		return map[string]any{"type": "object", "properties": map[string]any{
			"type": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"}, "id": map[string]any{"type": "string"}}}
	}
	if strings.HasPrefix(t, "map[string]") {
		return map[string]any{"type": "object"}
	}
	return map[string]any{}
}
