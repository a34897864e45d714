package studio

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/inspect"
)

// breakPanel is the Breakpoints tab: every place a run of the graph stops
// (before or after nodes, with or without a condition, and on data: a
// channel changing, the state coming to match an expression, a node
// writing a channel), each with a button to remove it; a new one is typed
// and checked as it is typed. The breakpoint that stopped the thread's
// last run is marked.
type breakPanel struct {
	m    *model
	keys keyFunc
	composite
	entry *keyEntry
	addB  *keyButton
	check *widget.Label
	list  *keyList
	empty *widget.Label
	rows  []brkRow
}

// brkRow is one breakpoint as the panel lists it.
type brkRow struct {
	Text   string
	Detail string
	Imp    widget.Importance // of the detail: danger when it does not fit the graph
	remove func()
}

const breakHelp = "change:CHANNEL · when:EXPR (or just EXPR) · write:NODE:CHANNEL · before:NODE [if EXPR] · after:NODE [if EXPR]"

func newBreakPanel(m *model, a *actions) *breakPanel {
	p := &breakPanel{m: m, keys: a.key}
	p.entry = newKeyEntry(a.key, false)
	p.entry.SetPlaceHolder("add a breakpoint, e.g. len(notes) > 3")
	p.entry.TextStyle.Monospace = true
	p.entry.OnChanged = func(string) { p.checkEntry() }
	p.entry.OnSubmitted = func(string) { p.add() }
	p.addB = newKeyButton(a.key, "Add", theme.ContentAddIcon(), p.add)
	p.check = widget.NewLabel(breakHelp)
	p.check.Wrapping = fyne.TextWrapWord
	p.check.Importance = widget.LowImportance
	p.list = newKeyList(a.key, func() int { return len(p.rows) }, func() fyne.CanvasObject {
		text := widget.NewLabel("breakpoint")
		text.TextStyle = fyne.TextStyle{Monospace: true}
		text.Truncation = fyne.TextTruncateEllipsis
		detail := widget.NewLabel("detail")
		detail.Truncation = fyne.TextTruncateEllipsis
		detail.SizeName = theme.SizeNameCaptionText
		rm := newKeyButton(p.keys, "", theme.DeleteIcon(), nil)
		rm.Importance = widget.LowImportance
		return container.NewBorder(nil, nil, nil, rm, container.New(&tightVBox{}, text, detail))
	}, func(i widget.ListItemID, o fyne.CanvasObject) {
		if i >= len(p.rows) {
			return
		}
		r := p.rows[i]
		c := o.(*fyne.Container)
		box := c.Objects[0].(*fyne.Container)
		box.Objects[0].(*widget.Label).SetText(r.Text)
		d := box.Objects[1].(*widget.Label)
		d.Importance = r.Imp
		d.SetText(r.Detail)
		rm := c.Objects[1].(*keyButton)
		rm.OnTapped = r.remove
	})
	p.empty = placeholder("No breakpoints. Right-click a node on the graph, or type one above.")
	top := container.NewVBox(container.NewBorder(nil, nil, nil, p.addB, p.entry), p.check)
	p.compose(p, container.NewBorder(top, nil, nil, nil, container.NewStack(p.empty, p.list)))
	m.subscribe(chGraph|chThread|chBreakpoints|chDebug|chRun, func(c part) {
		if c&(chGraph|chDebug) != 0 {
			p.checkEntry()
		}
		p.show()
	})
	p.show()
	return p
}

// show lists the model's breakpoints.
func (p *breakPanel) show() {
	m := p.m
	p.rows = nil
	if m.brk.All {
		p.rows = append(p.rows, brkRow{Text: "before every node", Detail: "Break on every node (F9)", remove: func() { m.setBreakAll(false) }})
	}
	for _, side := range []bool{false, true} {
		set := m.brk.Before
		word := "before"
		if side {
			set, word = m.brk.After, "after"
		}
		var names []string
		for n, on := range set {
			if on && !(m.brk.All && !side && !strings.Contains(n, "/")) {
				names = append(names, n)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			n, after := n, side
			detail := "stops the run " + word + " " + n + " runs"
			if after {
				detail = "stops the run after " + n + " ran"
			}
			if strings.Contains(n, "/") {
				detail += " (inside the subgraph " + strings.ReplaceAll(n[:strings.LastIndex(n, "/")], "/", " › ") + ")"
			}
			p.rows = append(p.rows, brkRow{Text: word + " " + strings.ReplaceAll(n, "/", " › "), Detail: detail,
				remove: func() { m.toggleBreakpoint(n, after) }})
		}
	}
	hit := m.scope().dbg.hit
	for _, b := range m.dbg.Breaks {
		spec := b.Spec
		r := brkRow{Text: spec, remove: func() { m.removeBreak(spec) }}
		switch {
		case b.Err != nil:
			r.Detail, r.Imp = "stops nothing: "+exprErrText(b.Err), widget.DangerImportance
		case hit != nil && hit.Breakpoint.Spec == spec:
			r.Detail, r.Imp = fmt.Sprintf("stopped the last run at step %d", hit.Step), widget.WarningImportance
		default:
			r.Detail = describeBreak(b.BP)
		}
		p.rows = append(p.rows, r)
	}
	if len(p.rows) == 0 {
		p.empty.Show()
	} else {
		p.empty.Hide()
	}
	p.list.Refresh()
}

// describeBreak says in words when a breakpoint stops a run.
func describeBreak(b inspect.Breakpoint) string {
	cond := ""
	if b.Cond != nil {
		cond = " when " + b.Cond.String() + " holds"
	}
	switch b.Kind {
	case inspect.BreakChange:
		return "stops after a step that changed " + b.Channel
	case inspect.BreakWhen:
		return "stops after a step that made " + b.Cond.String() + " true"
	case inspect.BreakWrite:
		return "stops after a step in which " + b.Node + " wrote " + b.Channel
	case inspect.BreakBefore:
		return "stops before " + b.Node + " runs" + cond
	case inspect.BreakAfter:
		return "stops after " + b.Node + " ran" + cond
	}
	return ""
}

// checkEntry checks the breakpoint being typed.
func (p *breakPanel) checkEntry() {
	spec := strings.TrimSpace(p.entry.Text)
	if spec == "" {
		p.setCheck(breakHelp, widget.LowImportance)
		return
	}
	b := p.m.dbg.parseBreak(spec)
	if b.Err != nil {
		p.setCheck(p.explain(spec, b.Err), widget.DangerImportance)
		return
	}
	p.setCheck("OK · "+describeBreak(b.BP)+" · Enter adds it", widget.SuccessImportance)
}

// explain words a breakpoint's error, with a hint for a bare node name.
func (p *breakPanel) explain(spec string, err error) string {
	if g := p.m.graph().Graph; g != nil && slices.Contains(g.Nodes(), spec) {
		return fmt.Sprintf("%s is a node: before:%s or after:%s (add \"if EXPR\" for a condition)", spec, spec, spec)
	}
	var ee *inspect.ExprError
	if errors.As(err, &ee) {
		return exprErrText(err)
	}
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "\": "); ok && strings.HasPrefix(msg, "breakpoint \"") {
		return rest
	}
	return msg
}

func (p *breakPanel) setCheck(text string, imp widget.Importance) { setLabel(p.check, text, imp) }

// add adds the typed breakpoint when it parses.
func (p *breakPanel) add() {
	spec := strings.TrimSpace(p.entry.Text)
	if err := p.m.addBreak(spec); err != nil {
		p.setCheck(p.explain(spec, err), widget.DangerImportance)
		return
	}
	p.entry.SetText("")
}
