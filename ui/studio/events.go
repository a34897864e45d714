package studio

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// maxEvents bounds the event log; older rows are dropped.
const maxEvents = 5000

// evRow is one line of the event log.
type evRow struct {
	When time.Time
	Step int
	Mode string
	Node string
	Text string
}

// eventsPanel is the run's stream as a filterable list, live while the run
// goes: tasks, updates, custom events, message chunks, checkpoints.
type eventsPanel struct {
	s      *Studio
	obj    fyne.CanvasObject
	list   *widget.List
	mode   *widget.Select
	node   *widget.Entry
	rows   []evRow
	shown  []int
	mu     sync.Mutex
	buf    []engine.Event // events from the observer not yet shown
	timer  *time.Timer
	follow bool
}

var eventModes = []string{"all", "tasks", "updates", "messages", "custom", "checkpoints", "values"}

func newEventsPanel(s *Studio) *eventsPanel {
	p := &eventsPanel{s: s, follow: true}
	p.list = widget.NewList(func() int { return len(p.shown) },
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
			r := p.rows[p.shown[i]]
			box := o.(*fyne.Container)
			head := fmt.Sprintf("%s · step %d · %s", clockMS(r.When), r.Step, r.Mode)
			body := r.Text
			if r.Node != "" {
				body = r.Node + ": " + r.Text
			}
			box.Objects[0].(*widget.Label).SetText(head)
			box.Objects[1].(*widget.Label).SetText(body)
		})
	p.node = widget.NewEntry()
	p.node.SetPlaceHolder("Filter by node or text…")
	p.mode = widget.NewSelect(eventModes, nil)
	p.mode.SetSelected("all")
	p.mode.OnChanged = func(string) { p.filter() }
	p.node.OnChanged = func(string) { p.filter() }
	clear := widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), func() {
		p.rows = nil
		p.filter()
	})
	clear.Importance = widget.LowImportance
	bar := container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel("Show"), p.mode), clear, p.node)
	p.obj = container.NewBorder(bar, nil, nil, nil, p.list)
	return p
}

// observer returns the function a run reports its events to. It runs on
// the engine's observer goroutine: it only buffers, and schedules a
// refresh at most every 50 ms.
func (p *eventsPanel) observer() func(engine.Event) {
	return func(ev engine.Event) {
		if ev.Mode == engine.ModeDebug {
			return // the same tasks and checkpoints again
		}
		p.mu.Lock()
		p.buf = append(p.buf, ev)
		if p.timer == nil {
			p.timer = time.AfterFunc(50*time.Millisecond, func() { uiDo(p.flush) })
		}
		p.mu.Unlock()
	}
}

// flush moves buffered events into the list and the live highlights. It
// runs on the UI goroutine.
func (p *eventsPanel) flush() {
	p.mu.Lock()
	evs := p.buf
	p.buf = nil
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	p.mu.Unlock()
	if len(evs) == 0 {
		return
	}
	live := false
	for _, ev := range evs {
		p.rows = append(p.rows, rowOf(ev))
		if ev.Mode == engine.ModeTasks && ev.Task != nil && p.s.running != nil {
			live = true
			if ev.Task.Done {
				p.s.running[ev.Task.Name] = false
				p.s.finished[ev.Task.Name] = true
			} else {
				p.s.running[ev.Task.Name] = true
			}
		}
	}
	if over := len(p.rows) - maxEvents; over > 0 {
		p.rows = append(p.rows[:0:0], p.rows[over:]...)
	}
	p.filter()
	if live {
		p.s.gp.highlight()
	}
}

func (p *eventsPanel) filter() {
	mode := p.mode.Selected
	q := strings.ToLower(strings.TrimSpace(p.node.Text))
	p.shown = p.shown[:0]
	for i, r := range p.rows {
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
				r.Text += " (restored)"
			}
		}
	case ev.Message != nil:
		r.Node = ev.Message.Node
		r.Text = oneLine(ev.Message.Message.Content, 100)
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
		r.Node = ev.NS + " › " + r.Node
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

// errorsPanel lists failures: the node, its error and the task's input.
type errorsPanel struct {
	s    *Studio
	obj  fyne.CanvasObject
	list *widget.List
	rows []errRow
	none *widget.Label
}

type errRow struct {
	Node, Msg, Input string
}

func newErrorsPanel(s *Studio) *errorsPanel {
	p := &errorsPanel{s: s}
	p.list = widget.NewList(func() int { return len(p.rows) },
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
			r := p.rows[len(p.rows)-1-i]
			box := o.(*fyne.Container)
			who := r.Node
			if who == "" {
				who = "run"
			}
			box.Objects[0].(*widget.Label).SetText(who + ": " + r.Msg)
			box.Objects[1].(*widget.Label).SetText("input: " + r.Input)
			p.list.SetItemHeight(i, box.MinSize().Height)
		})
	p.none = placeholder("No errors. A node's failure shows here with its error and input; the studio keeps running.")
	p.obj = container.NewStack(p.none, p.list)
	p.list.Hide()
	return p
}

// add records a failure; input "" fills in later from the checkpoint.
func (p *errorsPanel) add(node, msg, input string) {
	for i := range p.rows {
		r := &p.rows[i]
		if r.Node == node && r.Msg == msg {
			if r.Input == "" || strings.HasPrefix(r.Input, "(") {
				r.Input = input
			}
			p.list.Refresh()
			return
		}
	}
	if input == "" {
		input = "(see the failed task in the latest checkpoint)"
	}
	p.rows = append(p.rows, errRow{node, msg, input})
	p.none.Hide()
	p.list.Show()
	p.list.Refresh()
}

// showTasks records the failed tasks of a checkpoint with their inputs,
// completing the rows a failed run added.
func (p *errorsPanel) showTasks(snap *engine.Snapshot) {
	for _, t := range snap.Tasks {
		if t.Error == "" {
			continue
		}
		input := "the state at step " + fmt.Sprint(snap.Metadata.Step) + " (see the Inspector)"
		if t.Input != nil {
			input = preview(toJSON(t.Input), 200)
		}
		known := false
		for i := range p.rows {
			r := &p.rows[i]
			if r.Node != t.Name {
				continue
			}
			if strings.HasPrefix(r.Input, "(") {
				r.Input = input
				known = true
			} else if strings.Contains(t.Error, strings.TrimPrefix(r.Msg, "panic: ")) {
				known = true
			}
		}
		if !known {
			p.add(t.Name, t.Error, input)
		}
	}
	p.list.Refresh()
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
