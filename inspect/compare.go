package inspect

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// Comparison is two checkpoints of one thread side by side: where their
// branches part, what each branch ran since, and how their states differ.
type Comparison struct {
	Thread string `json:"thread"`
	A      string `json:"a"` // checkpoint ids
	B      string `json:"b"`
	// Ancestor is the newest checkpoint both descend from (one of A and B
	// when one descends from the other).
	Ancestor string `json:"ancestor"`
	// StepsA and StepsB are the checkpoints from the ancestor (excluded) to
	// A and B, oldest first.
	StepsA []BranchStep `json:"steps_a"`
	StepsB []BranchStep `json:"steps_b"`
	// Channels compares every state channel that has a value on either
	// side, in the graph's order; Differ counts those that differ.
	Channels []ChannelDiff `json:"channels"`
	Differ   int           `json:"differ"`
}

// BranchStep is one checkpoint of a branch: its step, where it came from
// and which tasks made it.
type BranchStep struct {
	Checkpoint string   `json:"checkpoint"`
	Step       int      `json:"step"`
	Source     string   `json:"source"`
	Ran        []string `json:"ran,omitempty"` // the nodes whose writes made it
}

// ChannelDiff is one channel on both sides.
type ChannelDiff struct {
	Channel string `json:"channel"`
	Equal   bool   `json:"equal"`
	A       any    `json:"a,omitempty"`
	B       any    `json:"b,omitempty"`
	// Words is a word diff when both sides are strings that differ.
	Words []WordOp `json:"words,omitempty"`
	// WriterA and WriterB say which task last wrote the channel on each
	// branch since the ancestor; nil when the branch did not write it.
	WriterA *Writer `json:"writer_a,omitempty"`
	WriterB *Writer `json:"writer_b,omitempty"`
}

// Writer is the task (or manual update) that wrote a value.
type Writer struct {
	Checkpoint string `json:"checkpoint"` // the checkpoint the write led to
	Step       int    `json:"step"`
	Node       string `json:"node"`
	Task       string `json:"task,omitempty"` // "" for an update or fork
	Source     string `json:"source"`
}

// WordOp is a run of words both texts share (Op "="), only the first has
// ("-") or only the second has ("+").
type WordOp struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Compare compares checkpoints a and b of a thread (opts name the thread
// with engine.WithThread). The thread's history is read once.
func Compare(ctx context.Context, g *engine.Graph, a, b string, opts ...engine.RunOption) (*Comparison, error) {
	hist, err := g.History(ctx, checkpoint.ListOptions{}, opts...)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]*engine.Snapshot, len(hist))
	for _, s := range hist {
		byID[s.Ref.CheckpointID] = s
	}
	sa, sb := byID[a], byID[b]
	for id, s := range map[string]*engine.Snapshot{a: sa, b: sb} {
		if s == nil {
			return nil, fmt.Errorf("compare: the thread has no checkpoint %q", id)
		}
	}
	chainA := lineage(byID, sa)
	onA := make(map[string]int, len(chainA))
	for i, s := range chainA {
		onA[s.Ref.CheckpointID] = i
	}
	chainB := lineage(byID, sb)
	anc := -1
	var ancB int
	for i, s := range chainB {
		if j, ok := onA[s.Ref.CheckpointID]; ok {
			anc, ancB = j, i
			break
		}
	}
	if anc < 0 {
		return nil, fmt.Errorf("compare: checkpoints %s and %s share no ancestor", a, b)
	}
	c := &Comparison{Thread: sa.Ref.ThreadID, A: a, B: b, Ancestor: chainA[anc].Ref.CheckpointID,
		StepsA: branchSteps(byID, chainA[:anc]), StepsB: branchSteps(byID, chainB[:ancB])}
	for _, name := range stateKeys(g, sa, sb) {
		va, hasA := sa.Values[name]
		vb, hasB := sb.Values[name]
		if !hasA && !hasB {
			continue
		}
		d := ChannelDiff{Channel: name, A: va, B: vb, Equal: hasA == hasB && reflect.DeepEqual(va, vb)}
		if !d.Equal {
			c.Differ++
			if s1, ok := va.(string); ok {
				if s2, ok := vb.(string); ok {
					d.Words = DiffWords(s1, s2)
				}
			}
			d.WriterA = lastWriter(byID, chainA[:anc], name)
			d.WriterB = lastWriter(byID, chainB[:ancB], name)
		}
		c.Channels = append(c.Channels, d)
	}
	return c, nil
}

// lineage returns s and its ancestors, newest first.
func lineage(byID map[string]*engine.Snapshot, s *engine.Snapshot) []*engine.Snapshot {
	var out []*engine.Snapshot
	for s != nil {
		out = append(out, s)
		if s.Parent == nil {
			break
		}
		s = byID[s.Parent.CheckpointID]
	}
	return out
}

// branchSteps describes checkpoints given newest first, oldest first.
func branchSteps(byID map[string]*engine.Snapshot, chain []*engine.Snapshot) []BranchStep {
	out := make([]BranchStep, 0, len(chain))
	for i := len(chain) - 1; i >= 0; i-- {
		s := chain[i]
		out = append(out, BranchStep{Checkpoint: s.Ref.CheckpointID, Step: s.Metadata.Step, Source: string(s.Metadata.Source), Ran: s.Metadata.Tasks})
	}
	return out
}

// stateKeys are the keys two states are compared on: the graph's
// channels in their order, then, sorted, any key of either state that no
// channel declares (every key of a view's states, which declare none).
func stateKeys(g *engine.Graph, sa, sb *engine.Snapshot) []string {
	var names []string
	declared := map[string]bool{}
	for _, ch := range g.Channels() {
		names = append(names, ch.Name)
		declared[ch.Name] = true
	}
	var extra []string
	for _, vals := range []engine.Values{sa.Values, sb.Values} {
		for k := range vals {
			if !declared[k] {
				declared[k] = true
				extra = append(extra, k)
			}
		}
	}
	slices.Sort(extra)
	return append(names, extra...)
}

// lastWriter finds, on a branch given newest first, the newest checkpoint
// whose step wrote channel: the writes of the tasks that ran from its
// parent (stored with the parent) say it; a manual update or fork names
// its as-node.
func lastWriter(byID map[string]*engine.Snapshot, chain []*engine.Snapshot, channel string) *Writer {
	for _, s := range chain {
		w := &Writer{Checkpoint: s.Ref.CheckpointID, Step: s.Metadata.Step, Source: string(s.Metadata.Source)}
		if s.Metadata.Source != checkpoint.SourceLoop {
			if slices.Contains(s.Updated, channel) {
				w.Node = strings.Join(s.Metadata.Tasks, ", ")
				return w
			}
			continue
		}
		if s.Parent == nil {
			continue
		}
		parent := byID[s.Parent.CheckpointID]
		if parent == nil {
			continue
		}
		for _, t := range parent.Tasks {
			if slices.ContainsFunc(t.Result, func(x engine.Write) bool { return x.Channel == channel }) {
				w.Node, w.Task = t.Name, t.ID
				return w
			}
		}
	}
	return nil
}

// DiffWords compares two texts word by word (whitespace kept with the word
// before it), so a changed word in a long answer shows where it is.
func DiffWords(a, b string) []WordOp {
	wa, wb := words(a), words(b)
	same := func(x, y string) bool { return strings.TrimRight(x, " \t\r\n") == strings.TrimRight(y, " \t\r\n") }
	// Common ends first: most edits touch a small middle.
	p := 0
	for p < len(wa) && p < len(wb) && same(wa[p], wb[p]) {
		p++
	}
	s := 0
	for s < len(wa)-p && s < len(wb)-p && same(wa[len(wa)-1-s], wb[len(wb)-1-s]) {
		s++
	}
	var ops []WordOp
	add := func(op, text string) {
		if text == "" {
			return
		}
		if n := len(ops); n > 0 && ops[n-1].Op == op {
			ops[n-1].Text += text
			return
		}
		ops = append(ops, WordOp{op, text})
	}
	add("=", strings.Join(wb[:p], ""))
	ma, mb := wa[p:len(wa)-s], wb[p:len(wb)-s]
	if len(ma)*len(mb) > 4_000_000 { // too long to align word by word
		add("-", strings.Join(ma, ""))
		add("+", strings.Join(mb, ""))
	} else {
		for _, op := range lcsOps(ma, mb, same) {
			add(op.Op, op.Text)
		}
	}
	add("=", strings.Join(wb[len(wb)-s:], ""))
	return ops
}

// words splits s into words, each with the whitespace that follows it.
func words(s string) []string {
	var out []string
	start := 0
	inSpace := false
	for i, r := range s {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if inSpace && !space {
			out = append(out, s[start:i])
			start = i
		}
		inSpace = space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// lcsOps aligns two word lists by their longest common subsequence; same
// says whether two words match (equal runs show b's spacing).
func lcsOps(a, b []string, same func(x, y string) bool) []WordOp {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:], in one slice.
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(at(i+1, j), at(i, j+1))
			if same(a[i], b[j]) {
				v = at(i+1, j+1) + 1
			}
			l[i*(m+1)+j] = v
		}
	}
	var ops []WordOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && same(a[i], b[j]):
			ops = append(ops, WordOp{"=", b[j]})
			i, j = i+1, j+1
		case i < n && (j == m || at(i+1, j) >= at(i, j+1)): // removals before additions
			ops = append(ops, WordOp{"-", a[i]})
			i++
		default:
			ops = append(ops, WordOp{"+", b[j]})
			j++
		}
	}
	return ops
}

// JSON renders the comparison as indented JSON, values as JSON data.
func (c *Comparison) JSON() ([]byte, error) { return json.MarshalIndent(c, "", "  ") }
