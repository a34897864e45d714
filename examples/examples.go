// Package examples holds the demo graphs the studio opens by default: a
// writing assistant with a human review, a tool-using agent whose money
// transfer needs approval, a map-reduce over subjects with a subgraph and,
// when asked (WithFiles, FilesFromEnv), an agent on a real MCP server's
// tools.
// Their "models" are scripted and deterministic, so the demos run offline
// and the tests can assert exact states; WithAgentModel puts the agent on a
// real one (examples/live does, for the model $WEFT_MODEL names).
package examples

import (
	"fmt"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
	"github.com/weftstudio/weft/tool/mcp"
)

// Demo is one bundled graph with what the studio needs to offer it.
type Demo struct {
	Graph       *engine.Graph
	Description string
	// Example is a sensible first input, shown pre-filled in the new-thread
	// form.
	Example engine.Values
	// Close releases what the demo holds (the files agent's MCP server);
	// nil when it holds nothing.
	Close func() error
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
	if c.files != nil {
		builders = append(builders, func(s checkpoint.Saver) (Demo, error) {
			cl, err := connectFiles(*c.files)
			if err != nil {
				return Demo{}, err
			}
			d, err := Files(s, cl, c.model)
			if err != nil {
				cl.Close()
			}
			return d, err
		})
	}
	out := make([]Demo, 0, len(builders))
	for _, b := range builders {
		d, err := b(saver)
		if err != nil {
			for _, d := range out {
				if d.Close != nil {
					d.Close()
				}
			}
			return nil, fmt.Errorf("demo graphs: %w", err)
		}
		out = append(out, d)
	}
	return out, nil
}

// Option changes what All builds.
type Option func(*config)

type config struct {
	model model.ChatModel // the agents' model; nil: the scripted ones
	files *mcp.Server     // the files agent's server; nil: no files agent
}

// WithFiles adds the files agent (Files) on the filesystem MCP server
// srv, which All starts; FilesFromEnv makes this option from the
// environment.
func WithFiles(srv mcp.Server) Option { return func(c *config) { c.files = &srv } }

// WithAgentModel runs the tool agent, and the files agent, on m instead of
// their scripted models; nil keeps the scripted ones.
func WithAgentModel(m model.ChatModel) Option { return func(c *config) { c.model = m } }

func compileWith(b *engine.StateGraph, saver checkpoint.Saver, opts ...engine.CompileOption) (*engine.Graph, error) {
	if saver != nil {
		opts = append(opts, engine.WithSaver(saver))
	}
	return b.Compile(opts...)
}
