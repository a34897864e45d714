package agentserver

// An entrypoint's graph (package functional) on the Agent Server. LangGraph's
// server passes a run's input to an entrypoint as is — a number, a string, a
// list, an object — and shows the entrypoint's return value as the thread's
// values, the values chunks and the run's outcome, and a task's update as
// {name: result}. Recorded from LangGraph.js's dev server (1.5.1, LangGraph.js
// 1.7.3) into testdata/entrypoint-exchange.json by
// testdata/record-entrypoint-exchange.py; entrypoint_test.go replays it.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/functional"
)

// isEntrypoint reports whether g, one of the handler's graphs, is an
// entrypoint's graph.
func (h *Handler) isEntrypoint(g *engine.Graph) bool { return g != nil && h.entrypoints[g] }

// entrypointInput decodes a run's input for an entrypoint's graph: the
// JSON value as is, decoded to the entrypoint's input type.
func entrypointInput(g *engine.Graph, raw json.RawMessage) (engine.Values, error) {
	v, err := decodeJSON(g, functional.InputKey, raw)
	if err != nil {
		return nil, err
	}
	return engine.Values{functional.InputKey: v}, nil
}

// decodeJSON decodes a value of channel ch from the wire: plain JSON data
// (maps, lists, float64 numbers…) for a channel of an interface type, as
// an entrypoint of any takes it, the channel's Go type otherwise.
func decodeJSON(g *engine.Graph, ch string, raw json.RawMessage) (any, error) {
	for _, c := range g.Channels() {
		if c.Name == ch && c.GoType != nil && c.GoType.Kind() == reflect.Interface {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("channel %q: %w", ch, err)
			}
			return v, nil
		}
	}
	return g.DecodeValue(ch, raw)
}

// entrypointValues is an entrypoint graph's values as LangGraph shows
// them: its return value (null before its first return).
func entrypointValues(vals engine.Values) any { return wireValue(vals[functional.ReturnKey]) }

// stateValues is a snapshot's values as LangGraph's server shows them for
// g: its return value for an entrypoint's graph, the state otherwise.
func (h *Handler) stateValues(g *engine.Graph, vals engine.Values) any {
	if h.isEntrypoint(g) {
		return entrypointValues(vals)
	}
	return wireValues(vals)
}

// stateDoc is wireState for a snapshot of graph g.
func (h *Handler) stateDoc(g *engine.Graph, s *engine.Snapshot) map[string]any {
	doc := wireState(s)
	if h.isEntrypoint(g) {
		doc["values"] = entrypointValues(s.Values)
		for i, t := range s.Tasks {
			if tasks, ok := doc["tasks"].([]map[string]any); ok && t.Finished {
				if v, ok := entrypointResult(t.Result); ok {
					tasks[i]["result"] = v
				}
			}
		}
	}
	return doc
}

// entrypointResult is the return value an entrypoint's task wrote.
func entrypointResult(ws []engine.Write) (any, bool) {
	for _, w := range ws {
		if w.Channel == functional.ReturnKey {
			return wireValue(w.Value), true
		}
	}
	return nil, false
}

// entrypointValuesChunk is a values event of an entrypoint's graph: the
// return value, or at an interrupt {"__interrupt__": […]}, with the keys
// of the return value when it is an object and the graph follows Python
// (whose chunk merges an object's keys, B2).
func entrypointValuesChunk(ev engine.Event, python bool) any {
	if ev.Interrupts == nil {
		return entrypointValues(ev.Values)
	}
	out := map[string]any{}
	if m, ok := entrypointValues(ev.Values).(map[string]any); ok && python && ev.Values != nil {
		out = m
	}
	out["__interrupt__"] = wireInterrupts(ev.Interrupts)
	return out
}

// entrypointEvents rewrites the wire events of an entrypoint's graph as
// LangGraph's server sends them: values chunks and checkpoint payloads
// carry the return value, and the entrypoint's update is {name: return
// value}.
func entrypointEvents(ev engine.Event, evs []wireEvent, python bool) []wireEvent {
	for i, e := range evs {
		switch e.mode {
		case "values":
			evs[i].data = entrypointValuesChunk(ev, python)
		case "updates":
			if u := ev.Update; u != nil && !u.Returned {
				if v, ok := entrypointResult(u.Writes); ok {
					evs[i].data = map[string]any{u.Node: v}
				}
			}
		case "checkpoints", "debug":
			if ev.State == nil {
				continue
			}
			d, _ := e.data.(map[string]any)
			if p, ok := d["payload"].(map[string]any); ok && strings.HasPrefix(e.mode, "debug") {
				p["values"] = entrypointValues(ev.State.Values)
			} else if d != nil {
				d["values"] = entrypointValues(ev.State.Values)
			}
		}
	}
	return evs
}

// entrypointUpdate is an update of an entrypoint's thread (POST
// /threads/{id}/state): values, any JSON value, become the entrypoint's
// return value and what its next run gets as prev, written as its node,
// as LangGraph's update_state does on an entrypoint's graph.
func entrypointUpdate(g *engine.Graph, raw json.RawMessage) (engine.Update, error) {
	ret, err := decodeJSON(g, functional.ReturnKey, raw)
	if err != nil {
		return nil, err
	}
	prev, err := decodeJSON(g, functional.PreviousKey, raw)
	if err != nil {
		return nil, err
	}
	return engine.Update{{Channel: functional.ReturnKey, Value: ret}, {Channel: functional.PreviousKey, Value: prev}}, nil
}
