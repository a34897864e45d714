package replay

// Running a recorded super-step again, answering its interrupts with the
// recorded answers, and comparing what it made.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// outcome is how a replayed step ended: with a new checkpoint (ref), or
// stopped inside the step at questions the recording has no answer for
// (waiting), or failed (err).
type outcome struct {
	ref     string
	waiting []engine.PendingInterrupt
	err     error
	done    bool // the replay had nothing to run
}

// maxPauses bounds the runs of a step that stop with neither a checkpoint
// nor a question (a subgraph's own breakpoint).
const maxPauses = 16

// runStep runs the super-step (gap of them for a thread recorded with
// gaps) from replayed lineage checkpoint from, answering interrupts with
// the answers recorded at the same place, until it makes a checkpoint,
// fails or waits for an answer the recording does not have.
func (r *replayer) runStep(ctx context.Context, from, at, gap int, hook engine.PhaseFunc) (outcome, *Difference, error) {
	fromID := r.got[from]
	rs, err := r.replayed(ctx, fromID)
	if err != nil {
		return outcome{}, nil, err
	}
	r.book.startStep(from, r.lineage[from].snap, rs)
	pauses := 0
	for range maxRounds {
		r.book.startRun()
		opts := []engine.RunOption{engine.WithStepLimit(max(gap, 1))}
		if hook != nil {
			opts = append(opts, engine.WithPhases(hook))
		}
		res, err := r.rep.Invoke(ctx, nil, r.runOpts(opts...)...)
		if f := r.book.takeFailed(); f != nil {
			d := r.diffAt(at, KindCall)
			d.Node, d.TaskPath, d.Call = f.Node, f.TaskPath, f
			d.Summary = f.String()
			return outcome{}, d, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return outcome{}, nil, ctx.Err()
			}
			return outcome{err: err}, nil, nil
		}
		if res.Ref.CheckpointID != fromID {
			return outcome{ref: res.Ref.CheckpointID}, nil, nil
		}
		if res.Done {
			return outcome{done: true}, nil, nil
		}
		if len(res.Interrupts) == 0 {
			if pauses++; pauses > maxPauses {
				return outcome{}, nil, fmt.Errorf("the step from replayed checkpoint %d keeps pausing without a question", from)
			}
			continue
		}
		fed := false
		var waiting []engine.PendingInterrupt
		for _, it := range res.Interrupts {
			ok, err := r.feed(ctx, from, it)
			if err != nil {
				return outcome{}, nil, err
			}
			if ok {
				fed = true
			} else {
				waiting = append(waiting, it)
			}
		}
		if !fed {
			return outcome{waiting: waiting}, nil, nil
		}
	}
	return outcome{}, nil, fmt.Errorf("the step from replayed checkpoint %d did not finish after %d answers", from, maxRounds)
}

// loopStep re-creates a recorded step's checkpoint.
func (r *replayer) loopStep(ctx context.Context, from, at int, target *recCP, hook engine.PhaseFunc) (string, *Difference, error) {
	out, d, err := r.runStep(ctx, from, at, target.step()-r.lineage[from].step(), hook)
	if err != nil || d != nil {
		return "", d, err
	}
	switch {
	case out.ref != "":
		return out.ref, nil, nil
	case out.err != nil:
		d := r.diffAt(at, KindError)
		d.Replayed = ""
		var ne *engine.NodeError
		if errors.As(out.err, &ne) {
			d.Node = ne.Node
			d.RecordedValue = r.recordedError(from, ne.Node)
		}
		d.ReplayedValue = out.err.Error()
		d.Summary = fmt.Sprintf("the step failed in the replay (%v); the recorded one finished", out.err)
		return "", d, nil
	case len(out.waiting) > 0:
		it := out.waiting[0]
		d := r.diffAt(at, KindInterrupt)
		d.Replayed = ""
		d.Node = it.Node
		d.ReplayedValue = jsonText(it.Value)
		where := ""
		if it.NS != "" {
			where = " in subgraph " + it.NS
		}
		d.Summary = fmt.Sprintf("node %q%s asked a question the recording has no answer for; the recorded step went on without asking it", it.Node, where)
		return "", d, nil
	}
	d = r.diffAt(at, KindMissing)
	d.Replayed = ""
	d.Summary = "the replay had nothing to run where the recording ran a step"
	return "", d, nil
}

// recordedError returns the error a recorded task of node stored at
// lineage checkpoint from ("" when none).
func (r *replayer) recordedError(from int, node string) string {
	for _, t := range r.lineage[from].snap.Tasks {
		if t.Name == node && t.Error != "" {
			return t.Error
		}
	}
	return ""
}

// feed gives the interrupted replayed task its next recorded answer: the
// answers of the recorded task at the same place (same step, same task
// path, in a subgraph the paired namespace), one more than it has had. It
// reports false when the recording has no further answer.
func (r *replayer) feed(ctx context.Context, from int, it engine.PendingInterrupt) (bool, error) {
	repTP, recTP, path, err := r.pairTask(ctx, from, it.NS, it.TaskID)
	if err != nil || recTP == nil || path == "" {
		return false, err
	}
	answers, err := resumeOf(recTP, func(pw checkpoint.PendingWrite) bool {
		return pw.TaskID != checkpoint.NullTaskID && pw.TaskPath == path
	})
	if err != nil {
		return false, fmt.Errorf("recorded checkpoint %s: %w", recTP.Ref.CheckpointID, err)
	}
	had, err := resumeOf(repTP, func(pw checkpoint.PendingWrite) bool { return pw.TaskID == it.TaskID })
	if err != nil {
		return false, err
	}
	if len(had) >= len(answers) {
		return false, nil
	}
	// The answers go where the engine keeps a task's answers, in the form
	// it stored them: each value exactly as recorded, its type included.
	b, err := json.Marshal(answers[:len(had)+1])
	if err != nil {
		return false, err
	}
	if err := r.repSaver.PutWrites(ctx, repTP.Ref, []checkpoint.Write{{Channel: checkpoint.Resume, Value: b}}, it.TaskID, path); err != nil {
		return false, fmt.Errorf("giving the recorded answer: %w", err)
	}
	return true, nil
}

// resumeOf returns the answers a task's Resume write holds (the first
// write keep accepts).
func resumeOf(tp *checkpoint.Tuple, keep func(checkpoint.PendingWrite) bool) ([]json.RawMessage, error) {
	for _, pw := range tp.PendingWrites {
		if pw.Channel != checkpoint.Resume || !keep(pw) {
			continue
		}
		var vals []json.RawMessage
		if err := json.Unmarshal(pw.Value, &vals); err != nil {
			return nil, fmt.Errorf("stored answers of task %s: %w", pw.TaskID, err)
		}
		return vals, nil
	}
	return nil, nil
}

// pairTask finds the replayed checkpoint where task taskID of namespace ns
// waits (the step's start at the root, the latest of ns in a subgraph),
// the recorded checkpoint paired with it, and the task's path.
func (r *replayer) pairTask(ctx context.Context, from int, ns, taskID string) (rep, rec *checkpoint.Tuple, path string, err error) {
	if ns == "" {
		if rep, err = r.replayedTuple(ctx, "", r.got[from]); err != nil {
			return nil, nil, "", err
		}
		rec = r.lineage[from].tp
	} else {
		if rep, err = r.replayedTuple(ctx, ns, ""); err != nil {
			return nil, nil, "", err
		}
		recNS, ok := r.mapNS(ctx, ns, from)
		if !ok {
			return rep, nil, "", nil
		}
		if rec, err = r.recordedAtStep(ctx, recNS, rep.Metadata.Step); err != nil {
			return nil, nil, "", err
		}
	}
	return rep, rec, pathOf(rep, taskID), nil
}

// pathOf returns the path of task id among tp's pending writes.
func pathOf(tp *checkpoint.Tuple, id string) string {
	if tp == nil {
		return ""
	}
	for _, pw := range tp.PendingWrites {
		if pw.TaskID == id && pw.TaskPath != "" {
			return pw.TaskPath
		}
	}
	return ""
}

// idOfPath returns the id of the task with path among tp's pending writes.
func idOfPath(tp *checkpoint.Tuple, path string) string {
	if tp == nil {
		return ""
	}
	for _, pw := range tp.PendingWrites {
		if pw.TaskPath == path && pw.TaskID != checkpoint.NullTaskID {
			return pw.TaskID
		}
	}
	return ""
}

// mapNS turns a replayed subgraph namespace ("node:<task id>|…") into the
// recorded one, level by level: a task id maps to the recorded task with
// the same path in the paired checkpoint of its level (the step's start
// at the root, the same step below). Only tasks that stored writes can be
// paired this way; ok is false otherwise.
func (r *replayer) mapNS(ctx context.Context, ns string, from int) (string, bool) {
	repParent, err := r.replayedTuple(ctx, "", r.got[from])
	if err != nil {
		return "", false
	}
	recParent := r.lineage[from].tp
	var repNS, recNS []string
	parts := strings.Split(ns, "|")
	for k, part := range parts {
		name, id, _ := strings.Cut(part, ":")
		lid := idOfPath(recParent, pathOf(repParent, id))
		if lid == "" {
			return "", false
		}
		repNS, recNS = append(repNS, part), append(recNS, name+":"+lid)
		if k == len(parts)-1 {
			break
		}
		if repParent, err = r.replayedTuple(ctx, strings.Join(repNS, "|"), ""); err != nil {
			return "", false
		}
		if recParent, err = r.recordedAtStep(ctx, strings.Join(recNS, "|"), repParent.Metadata.Step); err != nil || recParent == nil {
			return "", false
		}
	}
	return strings.Join(recNS, "|"), true
}

// recordedAtStep returns the latest recorded checkpoint of namespace ns at
// step, or nil.
func (r *replayer) recordedAtStep(ctx context.Context, ns string, step int) (*checkpoint.Tuple, error) {
	spaces, err := r.loadSpaces(ctx)
	if err != nil {
		return nil, err
	}
	var out *checkpoint.Tuple
	for _, tp := range spaces[ns] {
		if tp.Metadata.Step == step {
			out = tp
		}
	}
	return out, nil
}

// recordedSpaces returns the recorded checkpoints of the namespaces ns
// names: one, or, where a level is "node:*", every task of that node.
func (r *replayer) recordedSpaces(ctx context.Context, ns string) [][]*checkpoint.Tuple {
	spaces, err := r.loadSpaces(ctx)
	if err != nil {
		return nil
	}
	if !strings.Contains(ns, ":*") {
		return [][]*checkpoint.Tuple{spaces[ns]}
	}
	want := strings.Split(ns, "|")
	var out [][]*checkpoint.Tuple
	for name, tps := range spaces {
		have := strings.Split(name, "|")
		if len(have) != len(want) {
			continue
		}
		ok := true
		for k := range want {
			node, id, _ := strings.Cut(want[k], ":")
			if have[k] != want[k] && !(id == "*" && strings.HasPrefix(have[k], node+":")) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, tps)
		}
	}
	return out
}

// loadSpaces reads every recorded subgraph checkpoint of the thread once,
// by namespace, oldest first.
func (r *replayer) loadSpaces(ctx context.Context) (map[string][]*checkpoint.Tuple, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spaces != nil {
		return r.spaces, nil
	}
	spaces := map[string][]*checkpoint.Tuple{}
	for tp, err := range r.recSaver.List(ctx, checkpoint.ListOptions{ThreadID: r.thread}) {
		if err != nil {
			return nil, err
		}
		if tp.Ref.NS != "" {
			spaces[tp.Ref.NS] = append(spaces[tp.Ref.NS], tp)
		}
	}
	for _, tps := range spaces {
		slices.Reverse(tps)
	}
	r.spaces = spaces
	return spaces, nil
}

// copyNull stores on the replayed checkpoint the writes of the Command
// stored on the recorded one (update, goto; not its answer, which the
// tasks' own answers replace), as they were stored. They are there from
// the step's first run: the recorded checkpoint's snapshot shows them
// applied, and the recorded calls are those of the step's last run,
// which had them.
func (r *replayer) copyNull(ctx context.Context, from int) error {
	var ws []checkpoint.Write
	for _, pw := range r.lineage[from].tp.PendingWrites {
		if pw.TaskID == checkpoint.NullTaskID && pw.Channel != checkpoint.Resume {
			ws = append(ws, checkpoint.Write{Channel: pw.Channel, Value: pw.Value})
		}
	}
	if len(ws) == 0 {
		return nil
	}
	ref := checkpoint.Ref{ThreadID: r.thread, CheckpointID: r.got[from]}
	if err := r.repSaver.PutWrites(ctx, ref, ws, checkpoint.NullTaskID, ""); err != nil {
		return fmt.Errorf("re-applying the recorded command: %w", err)
	}
	return nil
}

// taskStatus is how far a task of a step got.
type taskStatus int

const (
	notRun taskStatus = iota
	failed
	waiting
	finished
)

func (s taskStatus) String() string {
	return [...]string{"did not run", "failed", "waits for an answer", "finished"}[s]
}

// statuses says how far each task of the step from tp got, by task path.
func statuses(tp *checkpoint.Tuple) map[string]taskStatus {
	out := map[string]taskStatus{}
	for _, pw := range tp.PendingWrites {
		if pw.TaskID == checkpoint.NullTaskID {
			continue
		}
		s := out[pw.TaskPath]
		switch pw.Channel {
		case checkpoint.Error:
			s = max(s, failed)
		case checkpoint.Interrupt:
			s = max(s, waiting)
		case checkpoint.Calls, checkpoint.Resume, checkpoint.Scheduled:
		default:
			s = finished
		}
		out[pw.TaskPath] = s
	}
	return out
}

// unfinished reports whether the step from c started but did not finish:
// some task stored something and some task did not finish.
func unfinished(c *recCP) bool {
	if len(c.snap.Tasks) == 0 {
		return false
	}
	st := statuses(c.tp)
	if len(st) == 0 {
		return false
	}
	return slices.ContainsFunc(c.snap.Tasks, func(t engine.TaskState) bool { return st[t.Path] != finished })
}

// unfinishedStep runs the step from lineage checkpoint j, which the
// recording left unfinished, and compares how far each task got.
func (r *replayer) unfinishedStep(ctx context.Context, j int) (*Difference, error) {
	out, d, err := r.runStep(ctx, j, j, 1, nil)
	if err != nil || d != nil {
		return d, err
	}
	rec := r.lineage[j]
	if out.ref != "" {
		d := r.diffAt(j, KindExtra)
		d.Summary = fmt.Sprintf("the recorded thread stops inside the step from this checkpoint (%s); the replay ran it to the end (replayed checkpoint %s)",
			describeStatuses(rec), out.ref)
		return d, nil
	}
	repTP, err := r.replayedTuple(ctx, "", r.got[j])
	if err != nil {
		return nil, err
	}
	rs, err := r.replayed(ctx, r.got[j])
	if err != nil {
		return nil, err
	}
	recSt, repSt := statuses(rec.tp), statuses(repTP)
	repTasks := map[string]engine.TaskState{}
	for _, t := range rs.Tasks {
		repTasks[t.Path] = t
	}
	for _, t := range rec.snap.Tasks {
		a, b := recSt[t.Path], repSt[t.Path]
		if a != b {
			kind := KindError
			switch {
			case a == finished || b == finished:
				kind = KindWrites
			case a == waiting || b == waiting:
				kind = KindInterrupt
			}
			d := r.diffAt(j, kind)
			d.Node, d.TaskPath = t.Name, t.Path
			d.RecordedValue, d.ReplayedValue = a.String(), b.String()
			if b == failed {
				d.ReplayedValue = repTasks[t.Path].Error
			}
			if a == failed {
				d.RecordedValue = t.Error
			}
			d.Summary = fmt.Sprintf("in the step from this checkpoint, task %s %s in the recording but %s in the replay", taskLabel(t), a, b)
			return d, nil
		}
		if a == finished {
			if d := r.diffWrites(j, t, repTasks[t.Path]); d != nil {
				return d, nil
			}
		}
	}
	if out.err != nil && !slices.Contains(mapsValues(repSt), failed) {
		d := r.diffAt(j, KindError)
		d.ReplayedValue = out.err.Error()
		d.Summary = fmt.Sprintf("the step from this checkpoint failed in the replay: %v", out.err)
		return d, nil
	}
	return nil, nil
}

func mapsValues(m map[string]taskStatus) []taskStatus {
	out := make([]taskStatus, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// describeStatuses lists the unfinished tasks of c's step.
func describeStatuses(c *recCP) string {
	st := statuses(c.tp)
	var parts []string
	for _, t := range c.snap.Tasks {
		if s := st[t.Path]; s != finished {
			parts = append(parts, fmt.Sprintf("%s %s", taskLabel(t), s))
		}
	}
	return strings.Join(parts, ", ")
}

// taskLabel names a task for people, quoted: "write", or
// "research[push:1]" for a Send.
func taskLabel(t engine.TaskState) string { return fmt.Sprintf("%q", label(t)) }

func label(t engine.TaskState) string {
	if strings.HasPrefix(t.Path, "push:") {
		idx, _, _ := strings.Cut(strings.TrimPrefix(t.Path, "push:"), ":")
		return fmt.Sprintf("%s[push:%s]", t.Name, idx)
	}
	return t.Name
}

// jsonText is v as JSON text, for a report.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// compare compares replayed checkpoint i with the recorded one.
func (r *replayer) compare(ctx context.Context, i int) (*Difference, error) {
	c := r.lineage[i]
	rs, err := r.replayed(ctx, r.got[i])
	if err != nil {
		return nil, err
	}
	if rs.Metadata.Source != c.source() {
		d := r.diffAt(i, KindSource)
		d.RecordedValue, d.ReplayedValue = string(c.source()), string(rs.Metadata.Source)
		d.Summary = fmt.Sprintf("the recorded checkpoint is of source %q, the replayed one %q", c.source(), rs.Metadata.Source)
		return d, nil
	}
	if rs.Metadata.Step != c.step() {
		d := r.diffAt(i, KindStep)
		d.RecordedValue, d.ReplayedValue = fmt.Sprint(c.step()), fmt.Sprint(rs.Metadata.Step)
		d.Summary = fmt.Sprintf("the recorded checkpoint is at step %d, the replayed one at %d", c.step(), rs.Metadata.Step)
		return d, nil
	}
	runs, err := r.runsOf(ctx, r.lineage[max(i-1, 0)].id())
	if err != nil {
		return nil, err
	}
	// The stored writes of a step run more than once are its first run's.
	firstRun := len(runs) > 0 && runs[0] == c.id()
	if i > 0 && (c.source() == checkpoint.SourceLoop || isEditFork(c)) && c.step() == r.lineage[i-1].step()+1 && firstRun {
		prev, err := r.replayed(ctx, r.got[i-1])
		if err != nil {
			return nil, err
		}
		byPath := map[string]engine.TaskState{}
		for _, t := range prev.Tasks {
			byPath[t.Path] = t
		}
		for _, t := range r.lineage[i-1].snap.Tasks {
			p, ok := byPath[t.Path]
			if !ok {
				continue
			}
			if d := r.diffWrites(i, t, p); d != nil {
				return d, nil
			}
		}
	}
	recVals, err := trees(c.snap.Values)
	if err != nil {
		return nil, fmt.Errorf("recorded checkpoint %d: %w", i, err)
	}
	repVals, err := trees(rs.Values)
	if err != nil {
		return nil, fmt.Errorf("replayed checkpoint %d: %w", i, err)
	}
	if cd := r.ids.diffValues(recVals, repVals, r.cfg.ignore); len(cd) > 0 {
		d := r.diffAt(i, KindState)
		d.Channels = cd
		d.Summary = "the state differs in " + channelList(cd)
		return d, nil
	}
	return r.compareNext(i, c.snap, rs)
}

// diffWrites compares the writes of a recorded task with the replayed
// task's; the difference is reported at lineage index at.
func (r *replayer) diffWrites(at int, rec, rep engine.TaskState) *Difference {
	rw, err1 := writeTrees(rec.Result)
	pw, err2 := writeTrees(rep.Result)
	var cd []ChannelDiff
	if err := errors.Join(err1, err2); err != nil {
		cd = []ChannelDiff{{Channel: "(writes)", Recorded: raw(err.Error())}}
	} else {
		cd = r.ids.diffValues(rw, pw, r.cfg.ignore)
	}
	if len(cd) == 0 {
		return nil
	}
	d := r.diffAt(at, KindWrites)
	d.Node, d.TaskPath, d.Channels = rec.Name, rec.Path, cd
	d.Summary = fmt.Sprintf("task %s wrote other values to %s", taskLabel(rec), channelList(cd))
	return d
}

// compareNext compares the tasks two checkpoints plan next: their names,
// Send targets and arguments.
func (r *replayer) compareNext(i int, rec, rep *engine.Snapshot) (*Difference, error) {
	rn, pn := nextOf(rec), nextOf(rep)
	if !slices.Equal(rn, pn) {
		d := r.diffAt(i, KindNext)
		d.RecordedNext, d.ReplayedNext = rn, pn
		if d.RecordedNext == nil {
			d.RecordedNext = []string{}
		}
		if d.ReplayedNext == nil {
			d.ReplayedNext = []string{}
		}
		d.Summary = fmt.Sprintf("the recording runs %s next, the replay %s", listOrNothing(rn), listOrNothing(pn))
		return d, nil
	}
	for k, t := range rec.Tasks {
		if !strings.HasPrefix(t.Path, "push:") {
			continue
		}
		a, err1 := toTree(t.Input)
		b, err2 := toTree(rep.Tasks[k].Input)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		key := "argument of " + label(t)
		if cd := r.ids.diffValues(map[string]tree{key: a}, map[string]tree{key: b}, nil); len(cd) > 0 {
			d := r.diffAt(i, KindNext)
			d.Node, d.TaskPath, d.Channels = t.Name, t.Path, cd
			d.Summary = fmt.Sprintf("the Send to %s carries another argument", taskLabel(t))
			return d, nil
		}
	}
	return nil, nil
}

// nextOf lists the tasks a snapshot plans: "name", or "name[push:i]".
func nextOf(s *engine.Snapshot) []string {
	var out []string
	for _, t := range s.Tasks {
		out = append(out, label(t))
	}
	return out
}

func listOrNothing(xs []string) string {
	if len(xs) == 0 {
		return "nothing"
	}
	return strings.Join(xs, ", ")
}

// trees turns channel values into trees.
func trees(vals engine.Values) (map[string]tree, error) {
	out := make(map[string]tree, len(vals))
	for k, v := range vals {
		t, err := toTree(v)
		if err != nil {
			return nil, fmt.Errorf("channel %q: %w", k, err)
		}
		out[k] = t
	}
	return out, nil
}

// writeTrees groups a task's writes by channel: the value when the
// channel was written once, the list of values otherwise.
func writeTrees(ws []engine.Write) (map[string]tree, error) {
	by := map[string][]tree{}
	for _, w := range ws {
		t, err := toTree(w.Value)
		if err != nil {
			return nil, fmt.Errorf("write to %q: %w", w.Channel, err)
		}
		by[w.Channel] = append(by[w.Channel], t)
	}
	out := make(map[string]tree, len(by))
	for k, v := range by {
		if len(v) == 1 {
			out[k] = v[0]
		} else {
			l := make([]any, len(v))
			copy(l, v)
			out[k] = l
		}
	}
	return out, nil
}

func channelList(cd []ChannelDiff) string {
	names := make([]string, len(cd))
	for i, c := range cd {
		names[i] = fmt.Sprintf("%q", c.Channel)
	}
	return strings.Join(names, ", ")
}
