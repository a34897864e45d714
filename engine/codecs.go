package engine

// This file holds the codecs of the engine's own channel values: the graph
// input and Send arguments (valuesCodec) and the Send packets (sendsCodec).

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"github.com/weftstudio/weft/checkpoint"
)

// valuesCodec stores a Values map (the graph input, a Send argument) with
// each value encoded by its channel's codec, so types survive.
type valuesCodec struct{ g *Graph }

func (c valuesCodec) goType() reflect.Type { return reflect.TypeFor[Values]() }

func (c valuesCodec) check(v any) error {
	if _, ok := v.(Values); ok {
		return nil
	}
	return fmt.Errorf("value of type %T, want engine.Values", v)
}

func (c valuesCodec) encode(v any) ([]byte, error) {
	vals, ok := v.(Values)
	if !ok {
		return nil, c.check(v)
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	// Written out directly rather than with json.Marshal of a map of
	// json.RawMessage, which re-scans every value to compact it (a wide
	// input is tens of kilobytes): codecs already produce compact JSON.
	// The bytes are the same. Values are encoded first so the output is
	// allocated once at its size, not grown through copies.
	enc := make([][]byte, len(keys))
	size := 2
	for n, k := range keys {
		i, ok := c.g.chanIdx[k]
		if !ok || i >= c.g.nState {
			return nil, fmt.Errorf("key %q is not a channel of graph %q", k, c.g.name)
		}
		b, err := c.g.specs[i].codec.encode(vals[k])
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		enc[n] = b
		size += len(k) + len(b) + 4
	}
	out := make([]byte, 1, size)
	out[0] = '{'
	for n, k := range keys {
		if n > 0 {
			out = append(out, ',')
		}
		if plainJSONString(k) {
			out, _ = appendSimpleJSON(out, k)
		} else {
			q, err := json.Marshal(k)
			if err != nil {
				return nil, err
			}
			out = append(out, q...)
		}
		out = append(out, ':')
		out = append(out, enc[n]...)
	}
	return append(out, '}'), nil
}

func (c valuesCodec) decode(b []byte) (any, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	out := make(Values, len(raw))
	for k, r := range raw {
		i, ok := c.g.chanIdx[k]
		if !ok || i >= c.g.nState {
			return nil, fmt.Errorf("key %q is not a channel of graph %q", k, c.g.name)
		}
		v, err := c.g.specs[i].codec.decode(r)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

// sendForm is the stored form of a Send: a Values argument is stored by
// channel codecs, anything else with its registered type.
type sendForm struct {
	Node   string          `json:"node"`
	Values json.RawMessage `json:"values,omitempty"`
	Arg    json.RawMessage `json:"arg,omitempty"`
}

type sendsCodec struct{ g *Graph }

func (c sendsCodec) goType() reflect.Type { return reflect.TypeFor[[]Send]() }

func (c sendsCodec) check(v any) error {
	switch v.(type) {
	case Send, []Send:
		return nil
	}
	return fmt.Errorf("value of type %T, want engine.Send", v)
}

// argGraph returns the graph whose channels a Send to node takes as its
// argument's keys: a subgraph node's own graph, else the graph itself.
func (c sendsCodec) argGraph(node string) *Graph {
	if i, ok := c.g.nodeIdx[node]; ok && c.g.nodes[i].sub != nil {
		return c.g.nodes[i].sub
	}
	return c.g
}

func (c sendsCodec) encodeOne(s Send) (sendForm, error) {
	f := sendForm{Node: s.Node}
	var err error
	if vals, ok := s.Arg.(Values); ok {
		f.Values, err = valuesCodec{c.argGraph(s.Node)}.encode(vals)
	} else {
		f.Arg, err = encodeDynamic(s.Arg)
	}
	if err != nil {
		return f, fmt.Errorf("Send to %q: %w", s.Node, err)
	}
	return f, nil
}

func (c sendsCodec) decodeOne(f sendForm) (Send, error) {
	s := Send{Node: f.Node}
	var err error
	if f.Values != nil {
		s.Arg, err = valuesCodec{c.argGraph(f.Node)}.decode(f.Values)
	} else if f.Arg != nil {
		s.Arg, err = decodeDynamic(f.Arg)
	}
	if err != nil {
		return s, fmt.Errorf("Send to %q: %w", f.Node, err)
	}
	return s, nil
}

func (c sendsCodec) encode(v any) ([]byte, error) {
	switch x := v.(type) {
	case Send:
		f, err := c.encodeOne(x)
		if err != nil {
			return nil, err
		}
		return json.Marshal(f)
	case []Send:
		forms := make([]sendForm, len(x))
		for i, s := range x {
			f, err := c.encodeOne(s)
			if err != nil {
				return nil, err
			}
			forms[i] = f
		}
		return json.Marshal(forms)
	}
	return nil, c.check(v)
}

func (c sendsCodec) decode(b []byte) (any, error) {
	if len(b) > 0 && b[0] == '{' {
		var f sendForm
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, err
		}
		return c.decodeOne(f)
	}
	var forms []sendForm
	if err := json.Unmarshal(b, &forms); err != nil {
		return nil, err
	}
	out := make([]Send, len(forms))
	for i, f := range forms {
		s, err := c.decodeOne(f)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// tasksSpec is the spec of the Send packets channel (LangGraph's TASKS):
// a topic of Send, coded with the graph so Send arguments keep their types.
func tasksSpec(g *Graph) *chanSpec {
	codec := sendsCodec{g}
	return topicSpec[Send](checkpoint.Tasks, false, codec, codec)
}
