package replay

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/weftstudio/weft/engine"
)

// Report is the outcome of a replay: whether the graph's current code
// reproduced the recorded thread, and if not, the first difference.
type Report struct {
	Thread string `json:"thread"`
	Graph  string `json:"graph"`
	Strict bool   `json:"strict"`
	// Match is true when every checkpoint of the recorded lineage was
	// reproduced; Difference is then nil.
	Match bool `json:"match"`
	// Checkpoints counts the checkpoints of the recorded lineage replayed
	// (from the first input to the head or the checkpoint given with To);
	// Matched how many of them the replay reproduced before the first
	// difference (all of them when Match).
	Checkpoints int `json:"checkpoints"`
	Matched     int `json:"matched"`
	// Served counts the model and tool calls served from the recording.
	Served CallCount `json:"served"`
	// Live lists the calls the recording could not serve and that went to
	// the real model or tool (never in a strict replay, where such a call
	// is the Difference), with why; at most 100 are kept.
	Live []CallDiff `json:"live_calls,omitempty"`
	// Difference is the first difference, as a workflow engine reports
	// non-determinism: nil when Match.
	Difference *Difference `json:"difference,omitempty"`
}

// CallCount counts calls by kind.
type CallCount struct {
	Model int `json:"model"`
	Tool  int `json:"tool"`
}

// Kind says what differs.
type Kind string

// Kinds of differences.
const (
	// KindSource: the replay made a checkpoint of another source (input,
	// loop, update, fork) than the recorded one.
	KindSource Kind = "source"
	// KindStep: the checkpoint's step number differs.
	KindStep Kind = "step"
	// KindWrites: a task of the step that made the checkpoint wrote other
	// values (Channels says which), or a task finished in one run and not
	// in the other.
	KindWrites Kind = "writes"
	// KindState: the checkpoint's state differs in the Channels listed
	// (though the writes were equal: a reducer changed).
	KindState Kind = "state"
	// KindNext: the tasks planned next differ (names, Send targets or
	// Send arguments).
	KindNext Kind = "next"
	// KindInterrupt: the replay asked a question the recording has no
	// answer for, or did not stop where the recorded thread waits for one.
	KindInterrupt Kind = "interrupt"
	// KindError: a node failed in the replay where the recorded one did
	// not (or the reverse).
	KindError Kind = "error"
	// KindCall: a strict replay met a model or tool call the recording
	// does not serve (Call says which and why).
	KindCall Kind = "call"
	// KindMissing: the replay stopped before reaching the checkpoint.
	KindMissing Kind = "missing"
	// KindExtra: the replay ran on past the recorded head.
	KindExtra Kind = "extra"
)

// Difference is the first place where the replay departs from the
// recording.
type Difference struct {
	// Index is the checkpoint's position in the recorded lineage (0 is
	// the first input); Step its step; Recorded its id. Replayed is the
	// replay's checkpoint at the same place ("" when it made none).
	Index    int    `json:"index"`
	Step     int    `json:"step"`
	Recorded string `json:"recorded_checkpoint"`
	Replayed string `json:"replayed_checkpoint,omitempty"`
	Kind     Kind   `json:"kind"`
	// Node and TaskPath name the task concerned (writes, interrupt, error,
	// call).
	Node     string `json:"node,omitempty"`
	TaskPath string `json:"task_path,omitempty"`
	// Channels are the differing channels (writes, state), in channel
	// order.
	Channels []ChannelDiff `json:"channels,omitempty"`
	// RecordedNext and ReplayedNext are the tasks planned next, as
	// "name" for a pull task and "name[push:i]" for a Send (next).
	RecordedNext []string `json:"recorded_next,omitempty"`
	ReplayedNext []string `json:"replayed_next,omitempty"`
	// Call describes the call a strict replay could not serve (call).
	Call *CallDiff `json:"call,omitempty"`
	// Recorded and replayed values of whatever else differs (source,
	// step, error text, interrupt payload), as text.
	RecordedValue string `json:"recorded_value,omitempty"`
	ReplayedValue string `json:"replayed_value,omitempty"`
	// Summary says it in one line.
	Summary string `json:"summary"`
}

// ChannelDiff is one channel whose recorded and replayed values differ.
// Path locates the first difference inside the value (".draft",
// "[3].content"; "" for the whole value). Values are JSON; a missing one
// (null) means the channel had no value (or the task did not write it).
// Message ids the replay generated afresh are shown as the recorded ids
// they stand for, so only real differences show.
type ChannelDiff struct {
	Channel  string          `json:"channel"`
	Path     string          `json:"path,omitempty"`
	Recorded json.RawMessage `json:"recorded"`
	Replayed json.RawMessage `json:"replayed"`
}

// CallDiff is a model or tool call the recording did not serve, and why.
type CallDiff struct {
	// Checkpoint is the lineage index of the checkpoint the calling step
	// started from; Node the calling node, TaskPath its task ("" inside a
	// subgraph, whose tasks are matched by node); NS the subgraph
	// namespace of the replay ("" at the root).
	Checkpoint int             `json:"checkpoint"`
	Node       string          `json:"node"`
	TaskPath   string          `json:"task_path,omitempty"`
	NS         string          `json:"ns,omitempty"`
	Kind       engine.CallKind `json:"kind"`
	// Name is the tool, or the model of the recorded call compared with.
	Name string `json:"name,omitempty"`
	// Index is the call's position among the task's calls of its kind in
	// this run, from 1.
	Index int `json:"index"`
	// What says what differed ("message 3 content", "tools", "arguments",
	// "no recorded call left", …); Recorded and Replayed are the differing
	// values, cut to a readable length.
	What     string `json:"what"`
	Recorded string `json:"recorded,omitempty"`
	Replayed string `json:"replayed,omitempty"`
}

// String describes the call and what differed, in one line.
func (c CallDiff) String() string {
	task := fmt.Sprintf("node %q", c.Node)
	if c.TaskPath != "" && c.TaskPath != "pull:"+c.Node {
		task += " (" + c.TaskPath + ")"
	}
	if c.NS != "" {
		task += " in subgraph " + c.NS
	}
	name := ""
	if c.Name != "" {
		name = fmt.Sprintf(" (%s)", c.Name)
	}
	s := fmt.Sprintf("%s call %d%s of %s at checkpoint %d: %s", c.Kind, c.Index, name, task, c.Checkpoint, c.What)
	if c.Recorded != "" || c.Replayed != "" {
		s += fmt.Sprintf(" (recorded %q, replayed %q)", c.Recorded, c.Replayed)
	}
	return s
}

// CallError is the error a strict replay fails a call with when the
// recording does not serve it.
type CallError struct{ Diff CallDiff }

// Error describes the CallError.
func (e *CallError) Error() string {
	return "replay: " + e.Diff.String() + "; a strict replay makes no live calls"
}

// JSON returns the report as indented JSON.
func (r *Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }

// Text returns the report for people: one line when the replay matched,
// else where it differs and a unified diff of each differing value.
func (r *Report) Text() string {
	var b strings.Builder
	served := fmt.Sprintf("%d model and %d tool calls served from the recording", r.Served.Model, r.Served.Tool)
	if len(r.Live) > 0 {
		served += fmt.Sprintf(", %d made live", len(r.Live))
	}
	if r.Match {
		fmt.Fprintf(&b, "replay of thread %q matches the recording: %d checkpoints; %s.\n", r.Thread, r.Checkpoints, served)
		return b.String()
	}
	d := r.Difference
	if d == nil {
		return fmt.Sprintf("replay of thread %q does not match, with no difference recorded\n", r.Thread)
	}
	fmt.Fprintf(&b, "replay of thread %q differs from the recording at checkpoint %d of %d (step %d, recorded %s", r.Thread, d.Index, r.Checkpoints, d.Step, d.Recorded)
	if d.Replayed != "" {
		fmt.Fprintf(&b, ", replayed %s", d.Replayed)
	}
	fmt.Fprintf(&b, "); %d checkpoints matched before it; %s.\n", r.Matched, served)
	fmt.Fprintf(&b, "%s: %s\n", d.Kind, d.Summary)
	if d.RecordedValue != "" || d.ReplayedValue != "" {
		b.WriteString(unified("recorded", "replayed", d.RecordedValue, d.ReplayedValue))
	}
	if d.RecordedNext != nil || d.ReplayedNext != nil {
		b.WriteString(unified("recorded next", "replayed next", strings.Join(d.RecordedNext, "\n"), strings.Join(d.ReplayedNext, "\n")))
	}
	for _, c := range d.Channels {
		where := ""
		if c.Path != "" {
			where = ", first at " + c.Path
		}
		fmt.Fprintf(&b, "channel %q%s:\n", c.Channel, where)
		rec, rep := pretty(c.Recorded), pretty(c.Replayed)
		// Two texts diff line by line as text, not as JSON strings.
		var rs, ps string
		if json.Unmarshal(c.Recorded, &rs) == nil && json.Unmarshal(c.Replayed, &ps) == nil {
			rec, rep = rs, ps
		}
		b.WriteString(unified("recorded", "replayed", rec, rep))
	}
	if d.Call != nil && (d.Call.Recorded != "" || d.Call.Replayed != "") {
		b.WriteString(unified("recorded "+d.Call.What, "replayed "+d.Call.What, d.Call.Recorded, d.Call.Replayed))
	}
	for i, c := range r.Live {
		if i == 5 {
			fmt.Fprintf(&b, "… and %d more live calls\n", len(r.Live)-5)
			break
		}
		fmt.Fprintf(&b, "live: %s\n", c)
	}
	return b.String()
}

// unified is a unified diff of two texts, line by line.
func unified(from, to, a, b string) string {
	s, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{A: difflib.SplitLines(a), B: difflib.SplitLines(b),
		FromFile: from, ToFile: to, Context: 3})
	if err != nil || s == "" {
		return fmt.Sprintf("--- %s\n+++ %s\n-%s\n+%s\n", from, to, a, b)
	}
	return s
}

// pretty indents a JSON value; nil shows as "(none)".
func pretty(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "(none)"
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(b)
}
