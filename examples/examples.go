// Package examples holds the demo graphs the studio opens by default: a
// writing assistant with a human review, a tool-using agent whose money
// transfer needs approval, and a map-reduce over subjects with a subgraph.
// Their "models" are scripted and deterministic, so the demos run offline
// and the tests can assert exact states; WithAgentModel puts the agent on a
// real one (examples/live does, for the model $WEFT_MODEL names).
package examples

import (
	"fmt"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// Demo is one bundled graph with what the studio needs to offer it.
type Demo struct {
	Graph       *engine.Graph
	Description string
	// Example is a sensible first input, shown pre-filled in the new-thread
	// form.
	Example engine.Values
}

// All compiles every demo with saver (nil runs them without checkpoints;
// interrupts then cannot be answered). The writing assistant comes first: it
// is the one the studio opens on. With no options the agent runs on its
// scripted model.
func All(saver checkpoint.Saver, opts ...Option) ([]Demo, error) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	agent := Agent
	if c.model != nil {
		agent = func(s checkpoint.Saver) (Demo, error) { return AgentWithModel(s, NewBank(1000), c.model) }
	}
	builders := []func(checkpoint.Saver) (Demo, error){Writer, agent, MapReduce}
	out := make([]Demo, 0, len(builders))
	for _, b := range builders {
		d, err := b(saver)
		if err != nil {
			return nil, fmt.Errorf("demo graphs: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// Option changes what All builds.
type Option func(*config)

type config struct {
	model model.ChatModel // the agent's model; nil: the scripted one
}

// WithAgentModel runs the tool agent on m instead of its scripted model;
// nil keeps the scripted one.
func WithAgentModel(m model.ChatModel) Option { return func(c *config) { c.model = m } }

func compileWith(b *engine.StateGraph, saver checkpoint.Saver, opts ...engine.CompileOption) (*engine.Graph, error) {
	if saver != nil {
		opts = append(opts, engine.WithSaver(saver))
	}
	return b.Compile(opts...)
}
