package studio

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// callGroup is the calls one task made, as the Calls tab lists them under
// a heading naming the task and the step it ran in.
type callGroup struct {
	Title   string // "Step 3 · agent"
	Note    string // "wrote this checkpoint", "running", …
	Node    string
	Calls   []engine.CallRecord
	Dropped int  // calls the task made beyond what its records keep
	Live    bool // streamed by the run in progress, not read from the store
}

// liveCall is a call the run in progress reported (ModeCalls), kept in the
// thread's scope until the next run starts.
type liveCall struct {
	Step int
	NS   string
	engine.CallEvent
}

// callGroupsOf returns the calls around checkpoint v: first those of the
// tasks whose writes made it (its parent's tasks, when the loop wrote it),
// then those of the tasks planned from it (which run in the next step; at
// the thread's head these are the tasks that failed or wait for an
// answer). Subgraph tasks' own tasks follow their parent task, named by
// path.
func callGroupsOf(v *view) []callGroup {
	if v == nil {
		return nil
	}
	var out []callGroup
	md := v.Snap.Metadata
	if v.Parent != nil && md.Source == "loop" {
		out = appendTaskCalls(out, v.Parent.Tasks, "", md.Step, func(engine.TaskState) string { return "wrote this checkpoint" })
	}
	return appendTaskCalls(out, v.Snap.Tasks, "", md.Step+1, plannedNote)
}

// plannedNote says where a task planned from the shown checkpoint stands.
func plannedNote(t engine.TaskState) string {
	switch {
	case t.Error != "":
		return "planned here · failed"
	case len(t.Interrupts) > 0:
		return "planned here · waiting for an answer"
	case len(t.Result) > 0:
		return "planned here · finished"
	}
	return "planned here · not finished"
}

func appendTaskCalls(out []callGroup, tasks []engine.TaskState, prefix string, step int, note func(engine.TaskState) string) []callGroup {
	count := map[string]int{}
	for _, t := range tasks {
		count[t.Name]++
	}
	seen := map[string]int{}
	for _, t := range tasks {
		name := prefix + t.Name
		if count[t.Name] > 1 {
			seen[t.Name]++
			name = fmt.Sprintf("%s #%d", name, seen[t.Name])
		}
		if len(t.Calls) > 0 || t.CallsDropped > 0 {
			out = append(out, callGroup{Title: fmt.Sprintf("Step %d · %s", step, name), Note: note(t),
				Node: t.Name, Calls: t.Calls, Dropped: t.CallsDropped})
		}
		if t.State != nil {
			out = appendTaskCalls(out, t.State.Tasks, name+" › ", t.State.Metadata.Step, note)
		}
	}
	return out
}

// liveGroups groups the calls of the run in progress by task, in the order
// their first calls arrived.
func liveGroups(calls []liveCall) []callGroup {
	var out []callGroup
	at := map[string]int{}
	for _, c := range calls {
		node := c.Node
		if c.NS != "" {
			node = nsLabel(c.NS) + " › " + node
		}
		key := c.NS + "\x00" + c.TaskID
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, callGroup{Title: fmt.Sprintf("Step %d · %s", c.Step, node), Note: "running now", Node: c.Node, Live: true})
		}
		out[i].Calls = append(out[i].Calls, c.Record)
	}
	return out
}

// callRow is one line of the Calls list: a task's heading or one call.
type callRow struct {
	group int // index in callsView.groups
	call  int // index in the group's calls; -1 for the heading
}

// callsView is the Calls tab: every model and tool call of the tasks
// around the selected checkpoint, and live while a run streams them. A
// list names each call with its time and size (latency, tokens in → out,
// time to first token; or the tool's arguments and result); a call tapped
// opens in full in the tab's whole height: the request's messages and
// tools, the reply, the tool call's arguments and result, errors and
// attempts, with the full size of every text the record had to cut.
// Previous/Next walk the calls without going back to the list; Copy puts
// the record on the clipboard as JSON.
type callsView struct {
	widget.BaseWidget
	summary *widget.Label
	list    *keyList
	empty   *widget.Label
	listPg  fyne.CanvasObject

	detail *widget.RichText
	scroll *container.Scroll
	pos    *widget.Label
	backB  *keyButton
	prevB  *keyButton
	nextB  *keyButton
	copyB  *keyButton
	detPg  fyne.CanvasObject

	groups []callGroup
	rows   []callRow
	// open is the position of the call shown in full among all calls
	// listed, -1 while the list shows. It is kept when another checkpoint
	// is shown, so that walking a thread stays on "the second call".
	open int
}

const noCallsHint = "No model or tool calls around this checkpoint. A node's calls show here with their request, reply, tokens and times " +
	"(the model adapters and tool nodes record them; engine.RecordCall records your own)."

func newCallsView(keys keyFunc) *callsView {
	c := &callsView{open: -1}
	c.summary = widget.NewLabel("")
	c.summary.Truncation = fyne.TextTruncateEllipsis
	c.summary.SizeName = theme.SizeNameCaptionText
	c.list = newKeyList(keys, func() int { return len(c.rows) },
		func() fyne.CanvasObject {
			head := widget.NewLabel("call")
			head.Truncation = fyne.TextTruncateEllipsis
			detail := widget.NewLabel("detail")
			detail.SizeName = theme.SizeNameCaptionText
			detail.Truncation = fyne.TextTruncateEllipsis
			return container.New(&tightVBox{}, head, detail)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(c.rows) {
				return
			}
			head, detail := c.rowText(c.rows[i])
			box := o.(*fyne.Container)
			h, d := box.Objects[0].(*widget.Label), box.Objects[1].(*widget.Label)
			r := c.rows[i]
			bold := r.call < 0
			dimp := widget.LowImportance
			if r.call >= 0 && c.groups[r.group].Calls[r.call].Error != "" {
				dimp = widget.DangerImportance
			}
			if h.TextStyle.Bold != bold || h.Text != head {
				h.TextStyle.Bold, h.Text = bold, head
				h.Refresh()
			}
			if d.Importance != dimp || d.Text != detail {
				d.Importance, d.Text = dimp, detail
				d.Refresh()
			}
		})
	c.list.OnSelected = func(i widget.ListItemID) {
		c.list.Unselect(i) // a row opens its call; tapping it again opens it again
		if i < len(c.rows) {
			if r := c.rows[i]; r.call >= 0 {
				c.show(c.position(i))
			} else if i+1 < len(c.rows) && c.rows[i+1].group == r.group {
				c.show(c.position(i + 1)) // a task's heading opens its first call
			}
		}
	}
	c.empty = placeholder(noCallsHint)
	c.listPg = container.NewBorder(c.summary, nil, nil, nil, container.NewStack(c.empty, c.list))

	c.detail = widget.NewRichText()
	c.detail.Wrapping = fyne.TextWrapWord
	c.scroll = container.NewVScroll(c.detail)
	c.backB = newKeyButton(keys, "All calls", theme.NavigateBackIcon(), func() { c.show(-1) })
	c.prevB = newKeyButton(keys, "", theme.MoveUpIcon(), func() { c.show(c.open - 1) })
	c.nextB = newKeyButton(keys, "", theme.MoveDownIcon(), func() { c.show(c.open + 1) })
	c.copyB = newKeyButton(keys, "Copy as JSON", theme.ContentCopyIcon(), c.copyRecord)
	for _, b := range []*keyButton{c.backB, c.prevB, c.nextB, c.copyB} {
		b.Importance = widget.LowImportance
	}
	c.pos = widget.NewLabel("")
	c.pos.SizeName = theme.SizeNameCaptionText
	bar := container.NewBorder(nil, nil, container.NewHBox(c.backB, c.prevB, c.nextB, c.pos), c.copyB)
	c.detPg = container.NewBorder(container.NewVBox(bar, widget.NewSeparator()), nil, nil, nil, c.scroll)
	c.ExtendBaseWidget(c)
	c.set(nil)
	return c
}

// composed is what the widget draws (holds looks through it for the focus).
func (c *callsView) composed() fyne.CanvasObject { return container.NewStack(c.listPg, c.detPg) }

// CreateRenderer is part of fyne.Widget.
func (c *callsView) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewStack(c.listPg, c.detPg))
}

// set shows groups. A call shown in full stays open on the call at the
// same position when there is one; otherwise the list shows.
func (c *callsView) set(groups []callGroup) {
	c.groups = groups
	c.rows = c.rows[:0]
	for gi, g := range groups {
		c.rows = append(c.rows, callRow{group: gi, call: -1})
		for ci := range g.Calls {
			c.rows = append(c.rows, callRow{group: gi, call: ci})
		}
	}
	c.summary.SetText(callsSummary(groups))
	if len(c.rows) == 0 {
		c.empty.Show()
		c.list.Hide()
	} else {
		c.empty.Hide()
		c.list.Show()
	}
	c.list.Refresh()
	if c.open >= c.count() {
		c.open = -1
	}
	c.show(c.open)
}

// count returns how many calls are listed.
func (c *callsView) count() int {
	n := 0
	for _, r := range c.rows {
		if r.call >= 0 {
			n++
		}
	}
	return n
}

// position returns the position among calls of row i.
func (c *callsView) position(i int) int {
	n := 0
	for _, r := range c.rows[:i] {
		if r.call >= 0 {
			n++
		}
	}
	return n
}

// selected returns the call shown in full and its group (nil when the
// list shows).
func (c *callsView) selected() (*engine.CallRecord, *callGroup) {
	if c.open < 0 {
		return nil, nil
	}
	n := 0
	for _, r := range c.rows {
		if r.call < 0 {
			continue
		}
		if n == c.open {
			g := &c.groups[r.group]
			return &g.Calls[r.call], g
		}
		n++
	}
	return nil, nil
}

// show opens the call at position i in full; -1 (or a position out of
// range) shows the list.
func (c *callsView) show(i int) {
	total := c.count()
	if i < 0 || i >= total {
		c.open = -1
		c.detail.Segments = nil
		c.detPg.Hide()
		c.listPg.Show()
		return
	}
	moved := i != c.open
	c.open = i
	rec, g := c.selected()
	c.detail.Segments = callDetail(*rec, g)
	c.detail.Refresh()
	c.pos.SetText(fmt.Sprintf("call %d of %d", i+1, total))
	enable(c.prevB, i > 0)
	enable(c.nextB, i+1 < total)
	if moved {
		c.scroll.ScrollToTop()
	}
	c.listPg.Hide()
	c.detPg.Show()
}

// enable enables or disables w, touching it only when that changes.
func enable(w fyne.Disableable, on bool) {
	if on && w.Disabled() {
		w.Enable()
	} else if !on && !w.Disabled() {
		w.Disable()
	}
}

// copyRecord puts the call shown in full on the clipboard as JSON.
func (c *callsView) copyRecord() {
	rec, _ := c.selected()
	if rec == nil {
		return
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return
	}
	if a := fyne.CurrentApp(); a != nil {
		a.Clipboard().SetContent(string(b))
	}
}

// rowText is a row's two lines.
func (c *callsView) rowText(r callRow) (head, detail string) {
	g := c.groups[r.group]
	if r.call < 0 {
		head = g.Title
		detail = g.Note + " · " + plural(len(g.Calls), "call")
		if g.Dropped > 0 {
			detail += fmt.Sprintf(" (+%d not kept)", g.Dropped)
		}
		return head, detail
	}
	return callLine(g.Calls[r.call])
}

// callLine describes a call in two short lines: what and how long; then
// what it said.
func callLine(rec engine.CallRecord) (head, detail string) {
	switch rec.Kind {
	case engine.CallModel:
		head = "  model " + rec.Name + " · " + dur(rec.Latency)
		if rec.InputTokens > 0 || rec.OutputTokens > 0 {
			head += fmt.Sprintf(" · %d → %d tokens", rec.InputTokens, rec.OutputTokens)
		}
		if rec.FirstToken > 0 {
			head += " · first token " + dur(rec.FirstToken)
		}
		if rec.Attempts > 1 {
			head += fmt.Sprintf(" · %d attempts", rec.Attempts)
		}
		switch {
		case rec.Error != "":
			detail = "failed: " + rec.Error
		case rec.Reply != nil && len(rec.Reply.ToolCalls) > 0:
			var names []string
			for _, tc := range rec.Reply.ToolCalls {
				names = append(names, tc.Name)
			}
			detail = "asks for " + strings.Join(names, ", ")
			if rec.Reply.Content != "" {
				detail += ": " + rec.Reply.Content
			}
		case rec.Reply != nil:
			detail = "“" + rec.Reply.Content + "”"
		}
	default:
		head = fmt.Sprintf("  tool %s(%s) · %s", rec.Name, oneLine(rec.Args.Text, 40), dur(rec.Latency))
		if rec.Provider != "" {
			head += " · " + rec.Provider
		}
		detail = "→ " + rec.Result.Text
		if rec.Error != "" {
			detail = "failed: " + rec.Error
		}
	}
	return head, oneLine(detail, 160)
}

// callsSummary sums up the calls shown: how many, tokens and time.
func callsSummary(groups []callGroup) string {
	var models, tools, in, out int
	var lat time.Duration
	live := false
	for _, g := range groups {
		live = live || g.Live
		for _, c := range g.Calls {
			if c.Kind == engine.CallModel {
				models++
				in += c.InputTokens
				out += c.OutputTokens
				lat += c.Latency
			} else {
				tools++
			}
		}
	}
	if models+tools == 0 {
		return ""
	}
	var parts []string
	if models > 0 {
		parts = append(parts, plural(models, "model call"), fmt.Sprintf("%d tokens in, %d out", in, out), dur(lat)+" in models")
	}
	if tools > 0 {
		parts = append(parts, plural(tools, "tool call"))
	}
	s := strings.Join(parts, " · ")
	if live {
		s += " · streaming"
	}
	return s
}

// callDetail is the full view of one call.
func callDetail(rec engine.CallRecord, g *callGroup) []widget.RichTextSegment {
	var segs []widget.RichTextSegment
	add := func(s ...widget.RichTextSegment) { segs = append(segs, s...) }
	who := ""
	if g != nil {
		who = g.Title + " · "
	}
	if rec.Kind == engine.CallModel {
		title := "Model call · " + rec.Name
		if rec.Provider != "" {
			title += " (" + rec.Provider + ")"
		}
		add(headSeg(title))
		facts := []string{who + "started " + clockMS(rec.Start), "latency " + dur(rec.Latency)}
		if rec.FirstToken > 0 {
			facts = append(facts, "first token "+dur(rec.FirstToken))
		}
		facts = append(facts, fmt.Sprintf("%d tokens in, %d out", rec.InputTokens, rec.OutputTokens))
		if rec.FinishReason != "" {
			facts = append(facts, "finish "+rec.FinishReason)
		}
		if rec.Attempts > 1 {
			facts = append(facts, fmt.Sprintf("%d attempts", rec.Attempts))
		}
		add(mutedSeg(strings.Join(facts, " · ")))
		if rec.Error != "" {
			add(errorSeg("Failed: " + rec.Error))
		}
		reqHead := "Request · " + plural(len(rec.Request)+rec.Omitted, "message")
		if rec.Omitted > 0 {
			reqHead += fmt.Sprintf(" (%d older not kept: the record keeps the first and the newest)", rec.Omitted)
		}
		add(subSeg(reqHead))
		for i, m := range rec.Request {
			add(messageSegs(m)...)
			if i == 0 && rec.Omitted > 0 {
				add(mutedSeg(fmt.Sprintf("… %s not kept …", plural(rec.Omitted, "message"))))
			}
		}
		if len(rec.Tools) > 0 {
			add(subSeg("Tools offered · " + plural(len(rec.Tools), "tool")))
			for _, t := range rec.Tools {
				add(strongSeg(t.Name), paraSeg(" "+t.Description))
				if t.Parameters.Text != "" {
					add(codeSeg(prettyArgs(t.Parameters.Text)))
					if t.Parameters.Size > 0 {
						add(cutSeg(t.Parameters))
					}
				}
			}
		}
		add(subSeg("Reply"))
		if rec.Reply == nil {
			add(mutedSeg("No reply: the call failed before one was complete."))
		} else {
			add(messageSegs(*rec.Reply)...)
		}
		return segs
	}
	title := "Tool call · " + rec.Name
	if rec.Provider != "" {
		title += " (" + rec.Provider + ")" // an MCP server's tool: which server, and its name there
	}
	add(headSeg(title))
	facts := []string{who + "started " + clockMS(rec.Start), "took " + dur(rec.Latency)}
	if rec.ToolCallID != "" {
		facts = append(facts, "call id "+rec.ToolCallID)
	}
	add(mutedSeg(strings.Join(facts, " · ")))
	if rec.Error != "" {
		add(errorSeg("Failed: " + rec.Error))
	}
	add(subSeg("Arguments"))
	add(codeSeg(prettyArgs(rec.Args.Text)))
	if rec.Args.Size > 0 {
		add(cutSeg(rec.Args))
	}
	add(subSeg("Result"))
	if rec.Result.Text == "" {
		add(mutedSeg("(empty)"))
	} else {
		add(paraSeg(rec.Result.Text))
	}
	if rec.Result.Size > 0 {
		add(cutSeg(rec.Result))
	}
	return segs
}

// messageSegs shows one message of a request or reply: role, text (with
// its full size when cut) and tool calls.
func messageSegs(m engine.CallMessage) []widget.RichTextSegment {
	role := roleName(m.Role)
	if m.Name != "" {
		role += " · " + m.Name
	}
	if m.ToolCallID != "" {
		role += " · result of " + m.ToolCallID
	}
	segs := []widget.RichTextSegment{strongPara(role)}
	if m.Content != "" {
		segs = append(segs, paraSeg(m.Content))
	}
	if m.Size > 0 {
		segs = append(segs, cutSeg(engine.CallText{Text: m.Content, Size: m.Size}))
	}
	for i, a := range m.Attachments { // the record keeps what was attached, not the bytes
		segs = append(segs, mutedSeg(attachmentLine(i, a)))
	}
	for _, tc := range m.ToolCalls {
		segs = append(segs, plainSeg("→ "+tc.Name+" "), &widget.TextSegment{Style: widget.RichTextStyleCodeInline, Text: oneLine(tc.Args, 400)},
			mutedEnd("  id "+tc.ID))
	}
	return segs
}

// cutSeg says how much of a cut text is shown.
func cutSeg(t engine.CallText) widget.RichTextSegment {
	return warnSeg(fmt.Sprintf("Cut: %s of %s shown.", byteSize(len(t.Text)), byteSize(t.Size)))
}

func headSeg(s string) widget.RichTextSegment {
	return &widget.TextSegment{Style: widget.RichTextStyleSubHeading, Text: s}
}

func subSeg(s string) widget.RichTextSegment {
	st := widget.RichTextStyleParagraph
	st.TextStyle.Bold = true
	st.ColorName = theme.ColorNamePrimary
	return &widget.TextSegment{Style: st, Text: s}
}

func strongSeg(s string) widget.RichTextSegment {
	return &widget.TextSegment{Style: widget.RichTextStyleStrong, Text: s}
}

func strongPara(s string) widget.RichTextSegment {
	st := widget.RichTextStyleParagraph
	st.TextStyle.Bold = true
	return &widget.TextSegment{Style: st, Text: s}
}

func plainSeg(s string) widget.RichTextSegment {
	return &widget.TextSegment{Style: widget.RichTextStyleInline, Text: s}
}

func paraSeg(s string) widget.RichTextSegment {
	return &widget.TextSegment{Style: widget.RichTextStyleParagraph, Text: s}
}

func codeSeg(s string) widget.RichTextSegment {
	return &widget.TextSegment{Style: widget.RichTextStyleCodeBlock, Text: s}
}

func mutedSeg(s string) widget.RichTextSegment {
	st := widget.RichTextStyleParagraph
	st.ColorName = theme.ColorNameDisabled
	return &widget.TextSegment{Style: st, Text: s}
}

// mutedEnd is muted small text that ends its line.
func mutedEnd(s string) widget.RichTextSegment {
	st := widget.RichTextStyleParagraph
	st.ColorName = theme.ColorNameDisabled
	st.SizeName = theme.SizeNameCaptionText
	return &widget.TextSegment{Style: st, Text: s}
}

func errorSeg(s string) widget.RichTextSegment {
	st := widget.RichTextStyleParagraph
	st.ColorName = theme.ColorNameError
	return &widget.TextSegment{Style: st, Text: s}
}

func warnSeg(s string) widget.RichTextSegment {
	st := widget.RichTextStyleParagraph
	st.ColorName = theme.ColorNameWarning
	st.SizeName = theme.SizeNameCaptionText
	return &widget.TextSegment{Style: st, Text: s}
}

// dur shows a duration as a person reads it: "840 µs", "42 ms", "1.24 s".
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0 ms"
	case d < time.Millisecond:
		return fmt.Sprintf("%d µs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// byteSize shows a size in bytes, KB or MB (powers of 1024).
func byteSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.2f GB", float64(n)/(1<<30))
}

// plural says "1 call", "3 calls".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
