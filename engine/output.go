package engine

// This file turns what a node returns into its task's writes: state
// updates, Commands, and the writes of its edges, conditional edges and
// joins (LangGraph's writers).

import (
	"context"
	"fmt"
)

type parentCommandError struct{ cmd Command }

func (e *parentCommandError) Error() string { return "command for the parent graph" }

// output turns a node's Output into the task's writes, then runs its edges,
// joins and conditional edges (LangGraph's writers, in that order:
// StateGraph.compile attaches edges, waiting edges, then branches). Each
// writer is all or nothing: one that fails adds no writes, while those of
// the writers before it stay, and are stored with the task's error, as
// LangGraph's ChannelWrite and PregelRunner.commit do.
func (rt *runtime) output(ctx context.Context, t *task, out Output) (err error) {
	g := rt.g
	n := t.node
	mark := len(t.writes) // where the writer now running began
	defer func() {
		if err != nil {
			t.writes = t.writes[:mark]
		}
	}()
	addCmd := func(c Command) error {
		if c.Graph == ParentGraph {
			return &parentCommandError{c}
		}
		if c.Resume != nil || c.ResumeByID != nil {
			return routeError("node %q returned a Command with Resume; resume by giving the Command as the graph's input", t.name)
		}
		var err error
		if t.writes, err = rt.appendStateWrites(t.writes, t.name, c.Update); err != nil {
			return err
		}
		for _, to := range c.Goto {
			if to == END {
				continue
			}
			i, ok := g.chanIdx["branch:to:"+to]
			if !ok {
				return routeError("node %q: Command.Goto names unknown node %q", t.name, to)
			}
			t.writes = append(t.writes, cwrite{i, nil})
		}
		for _, s := range c.Sends {
			if err := rt.checkSend(s); err != nil {
				return err
			}
			t.writes = append(t.writes, cwrite{g.tasksCh, s})
		}
		return nil
	}
	switch o := out.(type) {
	case nil:
	case Update:
		var err error
		if t.writes, err = rt.appendStateWrites(t.writes, t.name, o); err != nil {
			return err
		}
	case Command:
		if err := addCmd(o); err != nil {
			return err
		}
	case Commands:
		for _, c := range o {
			if err := addCmd(c); err != nil {
				return err
			}
		}
	default:
		return routeError("node %q returned %T; a node returns engine.Update, engine.Command, engine.Commands or nil", t.name, out)
	}
	for _, c := range n.edges {
		t.writes = append(t.writes, cwrite{c, nil})
	}
	for _, c := range n.joins {
		t.writes = append(t.writes, cwrite{c, n.name})
	}
	for _, b := range n.branches {
		mark = len(t.writes)
		route, err := b.fn(ctx, State{r: freshReader{rt, t}})
		if err != nil {
			return fmt.Errorf("conditional edge from %q: %w", n.name, err)
		}
		for _, k := range route.Keys {
			to := k
			if b.pathMap != nil {
				var ok bool
				if to, ok = b.pathMap[k]; !ok {
					return routeError("conditional edge from %q: path key %q is not in its path map", n.name, k)
				}
			}
			if to == END {
				continue
			}
			if to == START || to == "" {
				return routeError("conditional edge from %q: cannot route to %q", n.name, k)
			}
			i, ok := g.chanIdx["branch:to:"+to]
			if !ok {
				return routeError("conditional edge from %q: unknown node %q", n.name, to)
			}
			t.writes = append(t.writes, cwrite{i, nil})
		}
		for _, s := range route.Sends {
			if err := rt.checkSend(s); err != nil {
				return fmt.Errorf("conditional edge from %q: %w", n.name, err)
			}
			t.writes = append(t.writes, cwrite{g.tasksCh, s})
		}
	}
	return nil
}

// routeError reports a node output the graph cannot follow: a route to
// an unknown node, a path key not in the path map, an output of the wrong
// kind, a write to a channel that is not there or does not fit. It is a
// Permanent InvalidUpdateError: running the node again routes the same way,
// and LangGraph too gives up at once on what it raises for these
// (ValueError, KeyError, TypeError are not retried by default_retry_on).
func routeError(format string, args ...any) error {
	return Permanent(&InvalidUpdateError{Msg: fmt.Sprintf(format, args...)})
}

func (rt *runtime) checkSend(s Send) error {
	if s.Node == END {
		// LangGraph raises a plain InvalidUpdateError here, which its
		// default retry policy retries; so does Weft's.
		return &InvalidUpdateError{Msg: "Cannot send a packet to the END node"}
	}
	i, ok := rt.g.nodeIdx[s.Node]
	if !ok || s.Node == START {
		return routeError("Send to unknown node %q", s.Node)
	}
	if sub := rt.g.nodes[i].sub; sub != nil {
		// The argument is the subgraph's input: it must be its channels'
		// values, or the child would silently start from nothing.
		vals, ok := s.Arg.(Values)
		if !ok {
			return routeError("Send to subgraph node %q: the argument is the subgraph's input and must be engine.Values of its channels, not %T", s.Node, s.Arg)
		}
		if _, err := sub.checkValues(vals); err != nil {
			return routeError("Send to subgraph node %q: %v", s.Node, err)
		}
	}
	return nil
}

// stateWrites resolves and type-checks a node's writes to state channels.
func (rt *runtime) stateWrites(node string, up Update) ([]cwrite, error) {
	return rt.appendStateWrites(nil, node, up)
}

// appendStateWrites resolves and type-checks writes onto dst.
func (rt *runtime) appendStateWrites(dst []cwrite, node string, up Update) ([]cwrite, error) {
	if len(up) == 0 {
		return dst, nil
	}
	g := rt.g
	out := dst
	for _, w := range up {
		i, ok := g.chanIdx[w.Channel]
		if !ok || i >= g.nState {
			return nil, Permanent(&InvalidUpdateError{Key: w.Channel, Msg: fmt.Sprintf("node %q wrote to %q, which is not a channel of graph %q", node, w.Channel, g.name)})
		}
		if err := g.specs[i].checkWrite(w.Value); err != nil {
			return nil, Permanent(&InvalidUpdateError{Key: w.Channel, Msg: fmt.Sprintf("node %q wrote to %q: %v", node, w.Channel, err)})
		}
		out = append(out, cwrite{i, w.Value})
	}
	return out, nil
}
