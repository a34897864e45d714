package engine

import (
	"context"
	"errors"
	"maps"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
)

// execSubgraph runs a subgraph node: the child graph gets the parent's
// values of the channels it shares by name, runs in the namespace
// "node:<task id>" (checkpointed there when the parent has a saver), and its
// final values of the shared channels become the task's writes — only those
// it changed, unlike LangGraph, which writes back every output key: parallel
// subgraph tasks then do not clash on keys they only read. A re-run of
// the same task (after an interrupt or a crash) resumes the child's own
// checkpoints instead of starting over.
func (rt *runtime) execSubgraph(ctx context.Context, t *task) (Output, error) {
	sub := t.node.sub
	ns := t.ns(rt)
	parents := maps.Clone(rt.cfg.parents)
	if parents == nil {
		parents = map[string]string{}
	}
	if rt.saver != nil {
		parents[rt.ns] = rt.cpID
	}
	// The subgraph keeps its own compiled breakpoints unless the run
	// replaced breakpoints: then its are the run's names qualified with this
	// node ("node|inner").
	cfg := &runConfig{thread: rt.cfg.thread, ns: ns, limit: rt.cfg.limit, durability: rt.cfg.durability,
		runID: rt.cfg.runID, metadata: rt.cfg.metadata, parents: parents, parentRT: rt}
	if rt.cfg.subPhases {
		cfg.phases, cfg.subPhases = rt.cfg.phases, true
	}
	if rt.cfg.beforeSet {
		cfg.before, cfg.beforeSet = inner(rt.cfg.before, t.name), true
	}
	if rt.cfg.afterSet {
		cfg.after, cfg.afterSet = inner(rt.cfg.after, t.name), true
	}
	var input Input
	var in Values
	resume := false
	if rt.saver != nil {
		_, err := rt.saver.Get(ctx, checkpoint.Ref{ThreadID: rt.cfg.thread, NS: ns})
		switch {
		case err == nil:
			resume = true
		case !errors.Is(err, checkpoint.ErrNotFound):
			return nil, err
		}
	}
	if !resume {
		if t.push {
			// A Send's argument is the subgraph's input, in its own schema
			// (checked when the Send was made).
			in, _ = t.arg.(Values)
		} else {
			in = Values{}
			src := committedReader{rt}
			for i := 0; i < sub.nState; i++ {
				name := sub.specs[i].name
				if v, ok := src.read(name); ok {
					in[name] = v // same type: Compile checks shared channels
				}
			}
		}
		input = in
	}
	res, err := sub.execute(ctx, input, cfg, rt.em.child(ns))
	if err != nil {
		var pc *parentCommandError
		if errors.As(err, &pc) {
			cmd := pc.cmd
			cmd.Graph = ""
			return cmd, nil
		}
		return nil, err
	}
	if res.Breakpoint != "" {
		// Stopped at one of its breakpoints: the parent task pauses as at
		// an interrupt, and a resume of the parent continues the subgraph.
		return nil, &InterruptError{}
	}
	up := Update{}
	for _, w := range res.changed {
		if j, ok := rt.g.chanIdx[w.Channel]; ok && j < rt.g.nState {
			up = append(up, w) // a channel of both graphs has one type (Compile)
		}
	}
	return up, nil
}

// startVersionStep is the step part (see VersionStep) of the versions a
// subgraph run in a fresh namespace gives its channels before any of its
// nodes runs: 1 for the input, 2 for the start step that copies the input
// into the state. A channel with a later version was written by one of the
// subgraph's nodes, whether they ran in this call or before an interrupt.
const startVersionStep = 2

// changedByNodes returns the state channels the graph's own nodes wrote in
// this namespace, with their values, in channel order.
func (rt *runtime) changedByNodes() []Write {
	var out []Write
	for i := 0; i < rt.g.nState; i++ {
		if checkpoint.VersionStep(rt.ver[i]) <= startVersionStep {
			continue
		}
		if v, ok := rt.ch[i].get(); ok {
			out = append(out, Write{rt.g.specs[i].name, v})
		}
	}
	return out
}

// inner returns the names in names qualified with node ("node|x"), without
// the qualifier: breakpoints a run sets inside a subgraph node.
func inner(names []string, node string) []string {
	var out []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, node+"|"); ok {
			out = append(out, rest)
		}
	}
	return out
}
