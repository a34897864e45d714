package studio

import (
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// maxEvents bounds a thread's event log; older rows are dropped.
const maxEvents = 5000

// evRow is one line of the event log.
type evRow struct {
	When time.Time
	Step int
	Mode string
	Node string
	Text string
	// MsgID and TaskID group streamed message chunks: chunks of one
	// message from one task extend one row.
	MsgID, TaskID string
	Chunks        int
}

// mergeEvents appends rows to log, folding a streamed chunk into the row
// of the same message and task when that row is among the last few (other
// tasks stream at the same time).
func mergeEvents(log, rows []evRow) []evRow {
	for _, r := range rows {
		if r.MsgID != "" {
			folded := false
			for i := len(log) - 1; i >= max(0, len(log)-32); i-- {
				o := &log[i]
				if o.MsgID == r.MsgID && o.TaskID == r.TaskID && o.Mode == r.Mode {
					o.Text += r.Text
					o.Chunks++
					folded = true
					break
				}
			}
			if folded {
				continue
			}
			r.Chunks = 1
		}
		log = append(log, r)
	}
	return log
}

// streamMsg is a message still streaming into the state, for the chat.
type streamMsg struct {
	ID, Node, Role, Text string
}

// eventsPanel shows the thread's event log (its runs' streams) as a
// filterable list, live while a run goes: tasks, updates, custom events,
// streamed messages (one row per message, growing as tokens arrive),
// checkpoints.
type eventsPanel struct {
	m *model
	composite
	list   *keyList
	mode   *keySelect
	node   *keyEntry
	shown  []int
	follow bool
}

var eventModes = []string{"all", "tasks", "updates", "messages", "calls", "custom", "checkpoints", "values"}

func newEventsPanel(m *model, a *actions) *eventsPanel {
	p := &eventsPanel{m: m, follow: true}
	p.list = newKeyList(a.key, func() int { return len(p.shown) },
		func() fyne.CanvasObject {
			head := widget.NewLabel("")
			head.SizeName = theme.SizeNameCaptionText
			head.Importance = widget.LowImportance
			head.Truncation = fyne.TextTruncateEllipsis
			body := widget.NewLabel("")
			body.Truncation = fyne.TextTruncateEllipsis
			return container.New(&tightVBox{}, head, body)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			rows := p.m.scope().events
			if i >= len(p.shown) || p.shown[i] >= len(rows) {
				return
			}
			r := rows[p.shown[i]]
			box := o.(*fyne.Container)
			head := fmt.Sprintf("%s · step %d · %s", clockMS(r.When), r.Step, r.Mode)
			if r.Chunks > 1 {
				head += fmt.Sprintf(" · %d chunks", r.Chunks)
			}
			body := r.Text
			if r.Node != "" {
				body = r.Node + ": " + r.Text
			}
			box.Objects[0].(*widget.Label).SetText(head)
			box.Objects[1].(*widget.Label).SetText(oneLine(body, 200))
		})
	p.node = newKeyEntry(a.key, false)
	p.node.SetPlaceHolder("Filter by node or text…")
	p.mode = newKeySelect(a.key, eventModes, nil)
	p.mode.SetSelected("all")
	p.mode.OnChanged = func(string) { p.filter() }
	p.node.OnChanged = func(string) { p.filter() }
	clear := newKeyButton(a.key, "Clear", theme.ContentClearIcon(), m.clearEvents)
	clear.Importance = widget.LowImportance
	bar := container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel("Show"), p.mode), clear, p.node)
	p.compose(p, container.NewBorder(bar, nil, nil, nil, p.list))
	m.subscribe(chThread|chEvents, func(part) { p.filter() })
	return p
}

func (p *eventsPanel) filter() {
	mode := p.mode.Selected
	q := strings.ToLower(strings.TrimSpace(p.node.Text))
	p.shown = p.shown[:0]
	for i, r := range p.m.scope().events {
		if mode != "" && mode != "all" && r.Mode != mode {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(r.Node+" "+r.Text), q) {
			continue
		}
		p.shown = append(p.shown, i)
	}
	p.list.Refresh()
	if p.follow && len(p.shown) > 0 {
		p.list.ScrollToBottom()
	}
}

// rowOf describes an event in one line.
func rowOf(ev engine.Event) evRow {
	r := evRow{When: ev.Time, Step: ev.Step, Mode: ev.Mode.String()}
	switch {
	case ev.Task != nil:
		r.Node = ev.Task.Name
		switch {
		case !ev.Task.Done:
			r.Text = "start"
			if ev.Task.Input != nil {
				r.Text += " with " + preview(toJSON(ev.Task.Input), 60)
			}
		case ev.Task.Error != "":
			r.Text = "failed: " + oneLine(ev.Task.Error, 100)
		case len(ev.Task.Interrupts) > 0:
			r.Text = "interrupted"
		default:
			r.Text = "done · wrote " + writeNames(ev.Task.Result)
		}
	case ev.Update != nil:
		r.Node = ev.Update.Node
		if len(ev.Update.Interrupts) > 0 {
			r.Text = fmt.Sprintf("%d interrupt(s): %s", len(ev.Update.Interrupts), preview(toJSON(ev.Update.Interrupts[0].Value), 60))
		} else {
			var parts []string
			for _, w := range ev.Update.Writes {
				parts = append(parts, w.Channel+"="+preview(toJSON(w.Value), 30))
			}
			r.Text = strings.Join(parts, " ")
			if ev.Update.Cached {
				r.Text += " (cached: not run, its stored writes applied)"
			}
		}
	case ev.Message != nil:
		r.Node = ev.Message.Node
		r.Text = ev.Message.Message.Content
		r.MsgID, r.TaskID = ev.Message.Message.ID, ev.Message.TaskID
		if r.MsgID == "" {
			r.MsgID = "task:" + r.TaskID // one message per task when chunks carry no id
		}
	case ev.State != nil:
		r.Text = "checkpoint · next " + joinNames(ev.State.Next)
	case ev.Mode == engine.ModeCustom:
		r.Text = preview(toJSON(ev.Custom), 100)
	case ev.Call != nil:
		r.Node = ev.Call.Node
		r.Text = callSummary(ev.Call.Record)
	case ev.Mode == engine.ModeValues && ev.Interrupts != nil:
		r.Text = fmt.Sprintf("interrupted · %d waiting", len(ev.Interrupts))
	case ev.Mode == engine.ModeValues:
		r.Text = fmt.Sprintf("%d channels", len(ev.Values))
	}
	if ev.NS != "" {
		r.Node = nsLabel(ev.NS) + " › " + r.Node
	}
	return r
}

func writeNames(ws []engine.Write) string {
	if len(ws) == 0 {
		return "nothing"
	}
	var names []string
	for _, w := range ws {
		names = append(names, w.Channel)
	}
	return joinNames(names)
}

// errorsPanel lists the current thread's failures: the thread and node,
// the error and the task's input.
type errorsPanel struct {
	m *model
	composite
	list *keyList
	none *widget.Label
}

// errRow is one failure of a thread.
type errRow struct {
	Thread, Node, Msg, Input string
	pendingInput             bool // Input is a stand-in until the checkpoint tells more
}

func newErrorsPanel(m *model, a *actions) *errorsPanel {
	p := &errorsPanel{m: m}
	p.list = newKeyList(a.key, func() int { return len(p.m.scope().errors) },
		func() fyne.CanvasObject {
			head := widget.NewLabel("")
			head.TextStyle.Bold = true
			head.Importance = widget.DangerImportance
			head.Wrapping = fyne.TextWrapWord
			in := widget.NewLabel("")
			in.Importance = widget.LowImportance
			in.Truncation = fyne.TextTruncateEllipsis
			return container.NewVBox(head, in)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			rows := p.m.scope().errors
			if i >= len(rows) {
				return
			}
			r := rows[len(rows)-1-i]
			box := o.(*fyne.Container)
			who := r.Node
			if who == "" {
				who = "run"
			}
			box.Objects[0].(*widget.Label).SetText(fmt.Sprintf("%s · %s: %s", r.Thread, who, r.Msg))
			box.Objects[1].(*widget.Label).SetText("input: " + r.Input)
			p.list.SetItemHeight(i, box.MinSize().Height)
		})
	p.none = placeholder("No errors in this thread. A node's failure shows here with its error and input; the studio keeps running.")
	p.compose(p, container.NewStack(p.none, p.list))
	p.list.Hide()
	m.subscribe(chThread|chErrors, func(part) {
		if len(m.scope().errors) == 0 {
			p.list.Hide()
			p.none.Show()
		} else {
			p.none.Hide()
			p.list.Show()
		}
		p.list.Refresh()
	})
	return p
}

// failedTasks turns a checkpoint's failed tasks into error rows.
func failedTasks(snap *engine.Snapshot) []errRow {
	var out []errRow
	for _, t := range snap.Tasks {
		if t.Error == "" {
			continue
		}
		input := "the state at step " + fmt.Sprint(snap.Metadata.Step) + " (see the Inspector)"
		if t.Input != nil {
			input = preview(toJSON(t.Input), 200)
		}
		msg := t.Error
		out = append(out, errRow{Node: t.Name, Msg: msg, Input: input})
	}
	return out
}

// callSummary is one line about a model or tool call: what, how big, how
// long, and whether it failed.
func callSummary(c engine.CallRecord) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", c.Kind, c.Name)
	if c.Kind == engine.CallModel && (c.InputTokens > 0 || c.OutputTokens > 0) {
		fmt.Fprintf(&b, " · %d→%d tokens", c.InputTokens, c.OutputTokens)
	}
	if c.Kind == engine.CallTool && c.Args.Text != "" {
		fmt.Fprintf(&b, " %s", oneLine(c.Args.Text, 60))
	}
	fmt.Fprintf(&b, " · %s", c.Latency.Round(time.Millisecond))
	if c.Error != "" {
		fmt.Fprintf(&b, " · failed: %s", oneLine(c.Error, 60))
	}
	return b.String()
}
