package replay

// Serving recorded calls (model.CallReplayer); the package doc says when
// a call matches a recorded one.

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
	"github.com/weftstudio/weft/model"
)

// maxLive bounds Report.Live.
const maxLive = 100

// stoppedByReader is the error model.Model records for a call whose reader
// left the stream early: the record has no reply to serve.
const stoppedByReader = "stopped by the consumer"

// pool is the recorded calls one replayed task may be served from.
type pool struct {
	node, path string
	model      []engine.CallRecord
	tool       []engine.CallRecord
	usedModel  []bool
	usedTool   []bool
	nModel     int // calls of each kind the task made in this run
	nTool      int
}

func newPool(node, path string, calls []engine.CallRecord) *pool {
	p := &pool{node: node, path: path}
	p.add(calls)
	return p
}

func (p *pool) add(calls []engine.CallRecord) {
	for _, c := range calls {
		switch c.Kind {
		case engine.CallModel:
			p.model = append(p.model, c)
			p.usedModel = append(p.usedModel, false)
		case engine.CallTool:
			p.tool = append(p.tool, c)
			p.usedTool = append(p.usedTool, false)
		}
	}
}

func (p *pool) reset() {
	clear(p.usedModel)
	clear(p.usedTool)
	p.nModel, p.nTool = 0, 0
}

// book serves recorded calls to the replay's nodes.
type book struct {
	r      *replayer
	strict bool

	mu     sync.Mutex
	at     int              // lineage index of the checkpoint the current step starts from
	byTask map[string]*pool // replayed root task id → its recorded calls
	recNS  map[string]string
	sub    map[string]*pool // "<recorded ns>\x00<step>\x00<node>" → recorded calls
	served CallCount
	live   []CallDiff
	failed *CallDiff // the first call a strict replay refused
}

func newBook(r *replayer, strict bool) *book {
	return &book{r: r, strict: strict, byTask: map[string]*pool{}, recNS: map[string]string{}, sub: map[string]*pool{}}
}

// startStep pairs the tasks of the replayed checkpoint rep with those of
// the recorded checkpoint rec (lineage index at) by task path.
func (b *book) startStep(at int, rec, rep *engine.Snapshot) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.at = at
	b.byTask = map[string]*pool{}
	b.recNS = map[string]string{}
	byPath := map[string]*engine.TaskState{}
	for i := range rec.Tasks {
		byPath[rec.Tasks[i].Path] = &rec.Tasks[i]
	}
	for _, t := range rep.Tasks {
		rt := byPath[t.Path]
		if rt == nil {
			continue
		}
		b.byTask[t.ID] = newPool(t.Name, t.Path, rt.Calls)
		if t.NS != "" && rt.NS != "" {
			b.recNS[t.NS] = rt.NS
		}
	}
	b.sub = map[string]*pool{}
}

// startRun is called before each run of the replay: every task starts
// serving from its first recorded call again.
func (b *book) startRun() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, p := range b.byTask {
		p.reset()
	}
	for _, p := range b.sub {
		p.reset()
	}
}

// poolFor returns the recorded calls the running task may be served from,
// or nil when the recording has none for it.
func (b *book) poolFor(ctx context.Context, rt engine.Runtime) *pool {
	if rt.NS == "" {
		return b.byTask[rt.TaskID]
	}
	ns, ok := b.mapNS(ctx, rt.NS)
	if !ok {
		return nil
	}
	key := ns + "\x00" + fmt.Sprint(rt.Step) + "\x00" + rt.Node
	if p, ok := b.sub[key]; ok {
		return p
	}
	p := &pool{node: rt.Node}
	for _, space := range b.r.recordedSpaces(ctx, ns) {
		for _, tp := range space {
			if tp.Metadata.Step != rt.Step-1 {
				continue
			}
			for _, pw := range tp.PendingWrites {
				if pw.Channel != checkpoint.Calls || nodeOfPath(pw.TaskPath) != rt.Node {
					continue
				}
				var stored struct {
					Calls []engine.CallRecord `json:"calls"`
				}
				if json.Unmarshal(pw.Value, &stored) == nil {
					p.add(stored.Calls)
				}
			}
		}
	}
	b.sub[key] = p
	return p
}

// mapNS turns a replayed subgraph namespace into the recorded one: its
// first level through the paired root tasks; deeper levels keep their
// node names and stand for every recorded task of that node (a trailing
// "|" marks such a prefix, see recordedSpaces).
func (b *book) mapNS(ctx context.Context, ns string) (string, bool) {
	parts := strings.Split(ns, "|")
	first, ok := b.recNS[parts[0]]
	if !ok {
		return "", false
	}
	if len(parts) == 1 {
		return first, true
	}
	if mapped, ok := b.r.mapNS(ctx, ns, b.at); ok {
		return mapped, true
	}
	out := first
	for _, p := range parts[1:] {
		name, _, _ := strings.Cut(p, ":")
		out += "|" + name + ":*"
	}
	return out, true
}

// nodeOfPath returns the node of a task path ("pull:n", "push:3:n").
func nodeOfPath(path string) string {
	switch {
	case strings.HasPrefix(path, "pull:"):
		return path[len("pull:"):]
	case strings.HasPrefix(path, "push:"):
		_, rest, _ := strings.Cut(path[len("push:"):], ":")
		return rest
	}
	return path
}

// serve answers a call of the running task: match picks the recorded
// call from the task's pool, or returns nil having said why in d.
func (b *book) serve(ctx context.Context, kind engine.CallKind, name string, match func(*pool, *CallDiff) *engine.CallRecord) (*engine.CallRecord, error) {
	rt, ok := engine.RuntimeOf(ctx)
	if !ok {
		return nil, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	d := CallDiff{Checkpoint: b.at, Node: rt.Node, NS: rt.NS, Kind: kind, Name: name, Index: 1}
	p := b.poolFor(ctx, rt)
	if p == nil {
		d.What = "the recording has no task of this node at this step"
		return b.refuse(d)
	}
	d.TaskPath = p.path
	rec := match(p, &d)
	if rec == nil {
		return b.refuse(d)
	}
	if kind == engine.CallModel {
		b.served.Model++
	} else {
		b.served.Tool++
	}
	return rec, nil
}

// ReplayModelCall serves a model call from the recording (see the file's
// doc for when a call matches).
func (b *book) ReplayModelCall(ctx context.Context, req *model.Request) (*engine.CallRecord, error) {
	return b.serve(ctx, engine.CallModel, "", func(p *pool, d *CallDiff) *engine.CallRecord {
		p.nModel++
		d.Index = p.nModel
		first := -1
		for i, rec := range p.model {
			if p.usedModel[i] {
				continue
			}
			if first < 0 {
				first = i
			}
			if what, _, _ := diffRequest(rec, req); what == "" {
				p.usedModel[i] = true
				d.Name = rec.Name
				if d.What = uncut(rec); d.What != "" {
					return nil
				}
				return &rec
			}
		}
		if first < 0 {
			d.What = fmt.Sprintf("no recorded call left (the recorded task made %d model calls)", len(p.model))
			return nil
		}
		d.Name = p.model[first].Name
		d.What, d.Recorded, d.Replayed = diffRequest(p.model[first], req)
		return nil
	})
}

// ReplayToolCall serves a tool call from the recording.
func (b *book) ReplayToolCall(ctx context.Context, call engine.ToolCall) (*engine.CallRecord, error) {
	return b.serve(ctx, engine.CallTool, call.Name, func(p *pool, d *CallDiff) *engine.CallRecord {
		p.nTool++
		d.Index = p.nTool
		best, sameID, sameName := -1, -1, -1
		for i, rec := range p.tool {
			if p.usedTool[i] || rec.Name != call.Name {
				continue
			}
			if sameName < 0 {
				sameName = i
			}
			if rec.ToolCallID == call.ID && sameID < 0 {
				sameID = i
			}
			if textEqual(rec.Args, call.Args) && (best < 0 || rec.ToolCallID == call.ID) {
				best = i
				if rec.ToolCallID == call.ID {
					break
				}
			}
		}
		if best >= 0 {
			p.usedTool[best] = true
			rec := p.tool[best]
			if rec.Result.Size > 0 {
				d.What = fmt.Sprintf("the recorded result was cut to %d of its %d bytes", len(rec.Result.Text), rec.Result.Size)
				return nil
			}
			return &rec
		}
		switch {
		case sameID >= 0:
			d.What, d.Recorded, d.Replayed = "arguments", clip(p.tool[sameID].Args.Text), clip(call.Args)
		case sameName >= 0:
			d.What, d.Recorded, d.Replayed = "arguments", clip(p.tool[sameName].Args.Text), clip(call.Args)
		default:
			d.What = fmt.Sprintf("no recorded call of tool %q left", call.Name)
		}
		return nil
	})
}

// refuse notes a call the recording does not serve: live in a lenient
// replay, an error in a strict one.
func (b *book) refuse(d CallDiff) (*engine.CallRecord, error) {
	if b.strict {
		if b.failed == nil {
			b.failed = &d
		}
		return nil, engine.Permanent(&CallError{Diff: d})
	}
	if len(b.live) < maxLive {
		b.live = append(b.live, d)
	}
	return nil, nil
}

// takeFailed returns the call a strict replay refused since the last
// call, if any, and forgets it.
func (b *book) takeFailed() *CallDiff {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.failed
	b.failed = nil
	return f
}

// uncut says why a matching record cannot be served ("" when it can).
func uncut(rec engine.CallRecord) string {
	if rec.Reply == nil {
		switch rec.Error {
		case "":
			return "the recorded call has neither a reply nor an error"
		case stoppedByReader:
			return "the recorded call was stopped by its reader before the reply was complete"
		}
		return ""
	}
	if rec.Reply.Size > 0 {
		return fmt.Sprintf("the recorded reply was cut to %d of its %d bytes", len(rec.Reply.Content), rec.Reply.Size)
	}
	for _, c := range rec.Reply.ToolCalls {
		if mayBeCut(c.Args) {
			return fmt.Sprintf("the recorded arguments of tool call %s may have been cut to %d bytes", c.ID, engine.MaxCallText)
		}
	}
	return ""
}

// mayBeCut reports whether a text a record kept without its size could
// have been cut (it is as long as the bound, less a partial character).
func mayBeCut(s string) bool { return len(s) > engine.MaxCallText-utf8.UTFMax }

// diffRequest compares a recorded model call's request with req and says
// what first differs ("" when the request matches), with both values.
func diffRequest(rec engine.CallRecord, req *model.Request) (what, recorded, replayed string) {
	kept := rec.Request
	if n := len(kept) + rec.Omitted; n != len(req.Messages) {
		return "number of messages", fmt.Sprint(n), fmt.Sprint(len(req.Messages))
	}
	for k, rm := range kept {
		i := k
		if k > 0 && rec.Omitted > 0 {
			i = len(req.Messages) - (len(kept) - k)
		}
		m := req.Messages[i]
		label := fmt.Sprintf("message %d", i+1)
		switch {
		case rm.Role != m.Role:
			return label + " role", rm.Role, m.Role
		case rm.Name != m.Name:
			return label + " name", rm.Name, m.Name
		case rm.ToolCallID != m.ToolCallID:
			return label + " tool call id", rm.ToolCallID, m.ToolCallID
		case !textEqual(engine.CallText{Text: rm.Content, Size: rm.Size}, m.Content):
			return label + " content", clip(rm.Content), clip(m.Content)
		case len(rm.ToolCalls) != len(m.ToolCalls):
			return label + " tool calls", callNames(rm.ToolCalls), callNames(m.ToolCalls)
		}
		for j, c := range rm.ToolCalls {
			mc := m.ToolCalls[j]
			cl := fmt.Sprintf("%s tool call %d", label, j+1)
			switch {
			case c.ID != mc.ID:
				return cl + " id", c.ID, mc.ID
			case c.Name != mc.Name:
				return cl + " name", c.Name, mc.Name
			case !argsEqual(c.Args, mc.Args):
				return cl + " arguments", clip(c.Args), clip(mc.Args)
			}
		}
	}
	if len(rec.Tools) != len(req.Tools) {
		return "tools", toolNames(rec.Tools), specNames(req.Tools)
	}
	for i, t := range rec.Tools {
		s := req.Tools[i]
		switch {
		case t.Name != s.Name:
			return fmt.Sprintf("tool %d name", i+1), t.Name, s.Name
		case t.Description != s.Description:
			return fmt.Sprintf("tool %q description", s.Name), clip(t.Description), clip(s.Description)
		case !textEqual(t.Parameters, string(s.Parameters)):
			return fmt.Sprintf("tool %q parameters", s.Name), clip(t.Parameters.Text), clip(string(s.Parameters))
		}
	}
	return "", "", ""
}

// textEqual reports whether a recorded text (perhaps cut, with its full
// size) stands for s.
func textEqual(rec engine.CallText, s string) bool {
	if rec.Size == 0 {
		return rec.Text == s
	}
	return len(s) == rec.Size && strings.HasPrefix(s, rec.Text)
}

// argsEqual compares tool call arguments a record kept (cut without a
// size when long) with the replay's.
func argsEqual(rec, s string) bool {
	if mayBeCut(rec) {
		return strings.HasPrefix(s, rec)
	}
	return rec == s
}

func callNames(cs []engine.ToolCall) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

func toolNames(ts []engine.CallToolSpec) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

func specNames(ts []model.ToolSpec) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// clip cuts a text shown in a report to 2,000 bytes.
func clip(s string) string {
	const n = 2000
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
