package engine

import (
	"context"
	"errors"
	"maps"
	"reflect"

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
	cfg := &runConfig{thread: rt.cfg.thread, ns: ns, limit: rt.cfg.limit, durability: rt.cfg.durability,
		beforeSet: true, afterSet: true, runID: rt.cfg.runID, metadata: rt.cfg.metadata, parents: parents, parentRT: rt}
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
		in = Values{}
		src := State{r: committedReader{rt}}
		if t.push {
			if vals, ok := t.arg.(Values); ok {
				src = State{r: valuesReader(vals)}
			}
		}
		for i := 0; i < sub.nState; i++ {
			name := sub.specs[i].name
			if v, ok := src.Get(name); ok {
				if sub.specs[i].codec.check(v) == nil {
					in[name] = v
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
	up := Update{}
	for i := 0; i < sub.nState; i++ {
		name := sub.specs[i].name
		v, ok := res.Values[name]
		if !ok {
			continue
		}
		if old, had := in[name]; had && reflect.DeepEqual(old, v) {
			continue // unchanged: writing it back would clash with sibling subgraphs
		}
		if j, ok := rt.g.chanIdx[name]; ok && j < rt.g.nState && rt.g.specs[j].codec.check(v) == nil {
			up = append(up, Write{name, v})
		}
	}
	return up, nil
}
