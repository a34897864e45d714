package engine

// This file turns a run's input (values, an Update, a Command) into the
// first writes of the run.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
)

// first handles the input: a new input checkpoint, or the start of a resume.
func (rt *runtime) first(input Input) error {
	g := rt.g
	hasState := rt.hasVersions()
	var nullWrites []cwrite
	var toStore []checkpoint.Write
	cmd, isCmd := input.(Command)
	if isCmd {
		if !hasState {
			return fmt.Errorf("thread %q has no checkpoint to resume: %w", rt.cfg.thread, ErrEmptyInput)
		}
		var err error
		if nullWrites, toStore, err = rt.commandWrites(cmd); err != nil {
			return err
		}
	}
	// NULL-task writes stored earlier (a previous Command on this checkpoint)
	// apply again, then the new ones are stored.
	var stored []cwrite
	if !rt.replay {
		for _, pw := range rt.pending {
			if pw.TaskID != checkpoint.NullTaskID {
				continue
			}
			if pw.Channel == checkpoint.Resume {
				if !rt.hasNull && rt.resumeMap == nil && !isCmd {
					v, err := decodeLoose(pw.Value)
					if err != nil {
						return fmt.Errorf("checkpoint %s: stored answer: %w", rt.cpID, err)
					}
					switch x := v.(type) {
					case answerUsed:
					case resumeMap:
						rt.resumeMap = x
					default:
						rt.nullResume, rt.hasNull = v, true
					}
				}
				continue
			}
			w, err := rt.decodePending(pw)
			if err != nil {
				return err
			}
			if w.ch >= 0 {
				stored = append(stored, w)
			}
		}
	}
	// LangGraph.js takes a Command without an answer as new input (B5):
	// its writes make an input checkpoint, and what was due stays due.
	asInput := isCmd && cmd.Resume == nil && cmd.ResumeByID == nil && rt.js()
	if len(toStore) > 0 && rt.saver != nil && !asInput {
		if err := rt.saver.PutWrites(rt.ctx, rt.cpRef, toStore, checkpoint.NullTaskID, ""); err != nil {
			return fmt.Errorf("saving the command: %w", err)
		}
	}
	rt.armed = rt.hasNull || rt.resumeMap != nil
	if asInput {
		if err := rt.applyNull(stored); err != nil {
			return err
		}
		return rt.commandInput(nullWrites)
	}
	if err := rt.applyNull(append(stored, nullWrites...)); err != nil {
		return err
	}

	resuming := hasState && (input == nil || isCmd)
	switch {
	case resuming:
		rt.seen.set("__interrupt__", slices.Clone(rt.ver))
		rt.emitValues()
		if rt.replay {
			return rt.startReplay()
		}
		return nil
	case input == nil:
		return fmt.Errorf("thread %q: %w", rt.cfg.thread, ErrEmptyInput)
	default:
		vals, err := rt.inputValues(input)
		if err != nil {
			return err
		}
		tasks, err := rt.prepare()
		if err != nil {
			return err
		}
		for _, t := range tasks {
			t.writes = nil
		}
		in := rt.pool.get() // recycled with the step's tasks
		in.name, in.writes = "__input__", append(in.writes, cwrite{g.startCh, vals})
		tasks = append(tasks, in)
		rt.seen.ensure("__input__")
		if _, err := rt.apply(tasks); err != nil {
			return err
		}
		if err := rt.put(checkpoint.SourceInput, nil); err != nil {
			return err
		}
		return nil
	}
}

// commandWrites checks a Command given as input against the loaded
// checkpoint and returns its writes, in memory and encoded for storing as
// NULL-task writes; it also arms the answers it carries.
func (rt *runtime) commandWrites(cmd Command) ([]cwrite, []checkpoint.Write, error) {
	g := rt.g
	if cmd.Graph == ParentGraph {
		return nil, nil, &InvalidUpdateError{Msg: "There is no parent graph: a Command with Graph ParentGraph cannot be a graph's input"}
	}
	if cmd.Resume == nil && cmd.ResumeByID == nil && len(cmd.Update) == 0 && len(cmd.Goto) == 0 && len(cmd.Sends) == 0 {
		return nil, nil, ErrEmptyInput
	}
	if (cmd.Resume != nil || cmd.ResumeByID != nil) && rt.saver == nil {
		return nil, nil, errors.New("resuming with a Command needs a graph compiled with engine.WithSaver")
	}
	ws, err := rt.stateWrites(START, cmd.Update)
	if err != nil {
		return nil, nil, err
	}
	for _, to := range cmd.Goto {
		if to == END {
			continue
		}
		i, ok := g.chanIdx["branch:to:"+to]
		if !ok {
			return nil, nil, fmt.Errorf("Command.Goto: unknown node %q", to)
		}
		ws = append(ws, cwrite{i, START})
	}
	for _, s := range cmd.Sends {
		if _, ok := g.nodeIdx[s.Node]; !ok || s.Node == START {
			return nil, nil, fmt.Errorf("Command.Sends: unknown node %q", s.Node)
		}
		ws = append(ws, cwrite{g.tasksCh, s})
	}
	var answer any
	switch {
	case cmd.ResumeByID != nil:
		pending := rt.pendingInterruptIDs()
		for id := range cmd.ResumeByID {
			if !slices.Contains(pending, id) {
				return nil, nil, fmt.Errorf("thread %q has no pending interrupt %q (pending: %s)", rt.cfg.thread, id, strings.Join(pending, ", "))
			}
		}
		rt.resumeMap = cmd.ResumeByID
		answer = resumeMap(cmd.ResumeByID)
	case cmd.Resume != nil:
		if ids := rt.pendingInterruptIDs(); len(ids) > 1 {
			if !rt.js() {
				return nil, nil, fmt.Errorf("there are %d pending interrupts: answer each by id with Command.ResumeByID", len(ids))
			}
			// LangGraph.js gives the one answer to every pending interrupt (B3).
			m := make(map[string]any, len(ids))
			for _, id := range ids {
				m[id] = cmd.Resume
			}
			rt.resumeMap = m
			answer = resumeMap(m)
			break
		}
		rt.nullResume, rt.hasNull = cmd.Resume, true
		answer = cmd.Resume
	}
	if rt.saver == nil {
		return ws, nil, nil
	}
	enc, err := rt.encodeWrites(ws)
	if err != nil {
		return nil, nil, err
	}
	if answer != nil {
		b, err := encodeLoose(answer)
		if err != nil {
			return nil, nil, fmt.Errorf("resume value: %w", err)
		}
		enc = append(enc, checkpoint.Write{Channel: checkpoint.Resume, Value: b})
	}
	return ws, enc, nil
}

func (rt *runtime) inputValues(input Input) (Values, error) {
	var vals Values
	switch in := input.(type) {
	case Values:
		vals = in
	case Update:
		vals = make(Values, len(in))
		for _, w := range in {
			vals[w.Channel] = w.Value
		}
	default:
		return nil, fmt.Errorf("unsupported input type %T", input)
	}
	return rt.g.checkValues(vals)
}

// checkValues checks that every key of vals is a state channel of gr and
// that its value fits, naming the first key that does not (in key order).
func (gr *Graph) checkValues(vals Values) (Values, error) {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		i, ok := gr.chanIdx[k]
		if !ok || i >= gr.nState {
			return nil, fmt.Errorf("input key %q is not a channel of graph %q", k, gr.name)
		}
		if err := gr.specs[i].checkWrite(vals[k]); err != nil {
			return nil, fmt.Errorf("input key %q: %w", k, err)
		}
	}
	return vals, nil
}

func (s *chanSpec) checkWrite(v any) error {
	if ow, ok := v.(Overwrite); ok {
		if s.kind != "reducer" {
			return fmt.Errorf("Overwrite is only for reducer channels, %q is %s", s.name, s.kind)
		}
		v = ow.Value
	}
	return s.codec.check(v)
}

// commandInput is the start of a run whose input is a Command without an
// answer, following LangGraphJS (B5): the Command's writes are applied as
// the writes of an input step, stored as an input checkpoint (no values
// event, as for any input), and the run goes on from there past the
// breakpoint it stopped at.
func (rt *runtime) commandInput(ws []cwrite) error {
	rt.seen.ensure("__input__")
	if _, err := rt.apply([]*task{{name: "__input__", writes: ws}}); err != nil {
		return err
	}
	rt.updated = nil // the tasks that were due before stay candidates
	rt.seen.set("__interrupt__", slices.Clone(rt.ver))
	return rt.put(checkpoint.SourceInput, nil)
}

// startReplay begins a run from an explicit checkpoint (time travel, B6).
// Following LangGraphJS, the run first writes a fork copy of a loop or
// input checkpoint and goes on from the copy; following Python, it
// continues any checkpoint as it is, its next checkpoint a child of the
// old one. Both LangGraphs continue an update or fork checkpoint as it is.
//
// Off the thread's head, Weft writes the fork copy first under both
// references (a deliberate difference from Python, see the package
// documentation's Writes off the head): the replayed step's task writes
// belong to a checkpoint whose step was finished before, which the stores
// shared between processes refuse as a late writer's
// (checkpoint.ErrConflict), and without them neither a resume nor a replay
// check could tell what that step did. WithNewBranch asks for the copy
// whatever the checkpoint is.
//
// A copy the reference would not write takes no step of the run's budget:
// the run may take as many steps after it, and its nodes see the same
// RemainingSteps, as the reference's run continuing the old checkpoint.
func (rt *runtime) startReplay() error {
	loop := rt.cpSource != checkpoint.SourceUpdate && rt.cpSource != checkpoint.SourceFork
	refCopies := loop && rt.js() // LangGraph.js writes this copy itself
	fork := func() error {
		if !refCopies {
			rt.stop++
		}
		return rt.put(checkpoint.SourceFork, nil)
	}
	if rt.cfg.newBranch || refCopies {
		return fork()
	}
	latest, err := rt.saver.Get(rt.ctx, checkpoint.Ref{ThreadID: rt.cfg.thread, NS: rt.ns})
	if err != nil {
		return fmt.Errorf("thread %q: %w", rt.cfg.thread, err)
	}
	if latest.Ref.CheckpointID != rt.cpID {
		return fork()
	}
	return nil
}
