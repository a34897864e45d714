package studio

import (
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/inspect"
)

// watchPanel is the Watches tab: expressions over the state, each with
// its value at the selected checkpoint and where along the branch it first
// held or changed (a click goes there); a boolean watch can also stop runs
// ("break when true"). A new expression is checked as it is typed. The
// watches are evaluated at every checkpoint of the thread in the
// background, with the progress shown; the timeline draws them as rows.
type watchPanel struct {
	m    *model
	keys keyFunc
	composite
	entry   *keyEntry
	addB    *keyButton
	check   *widget.Label
	list    *keyList
	empty   *widget.Label
	prog    *widget.ProgressBar
	status  *widget.Label
	summary []string // per watch: where it first held or changed
	jump    []string // per watch: the checkpoint that is
}

const watchHint = `An expression over the channels, e.g. revisions > 2, len(notes), draft contains "TODO"`

func newWatchPanel(m *model, a *actions) *watchPanel {
	p := &watchPanel{m: m, keys: a.key}
	p.entry = newKeyEntry(a.key, false)
	p.entry.SetPlaceHolder("add a watch, e.g. revisions > 2")
	p.entry.TextStyle.Monospace = true
	p.check = widget.NewLabel(watchHint)
	p.check.Wrapping = fyne.TextWrapWord
	p.check.Importance = widget.LowImportance
	p.entry.OnChanged = func(string) { p.checkEntry() }
	p.entry.OnSubmitted = func(string) { p.add() }
	p.addB = newKeyButton(a.key, "Watch", theme.ContentAddIcon(), p.add)
	p.list = newKeyList(a.key, func() int { return len(m.dbg.Watches) }, p.createRow, p.updateRow)
	p.empty = placeholder("No watches. A watch shows its value at the selected checkpoint and along the timeline.")
	p.prog = widget.NewProgressBar()
	p.prog.Hide()
	p.status = widget.NewLabel("")
	p.status.Importance = widget.LowImportance
	p.status.Truncation = fyne.TextTruncateEllipsis
	top := container.NewVBox(container.NewBorder(nil, nil, nil, p.addB, p.entry), p.check)
	bottom := container.NewBorder(nil, nil, nil, container.NewGridWrap(fyne.NewSize(120, p.status.MinSize().Height), p.prog), p.status)
	p.compose(p, container.NewBorder(top, bottom, nil, nil, container.NewStack(p.empty, p.list)))
	m.subscribe(chGraph|chThread|chDebug|chWatch|chView|chSelection|chTimeline, func(c part) {
		if c&(chGraph|chDebug) != 0 {
			p.checkEntry()
		}
		p.show()
	})
	p.show()
	return p
}

func (p *watchPanel) createRow() fyne.CanvasObject {
	expr := widget.NewLabel("expr")
	expr.TextStyle = fyne.TextStyle{Monospace: true}
	val := widget.NewLabel("value")
	val.Truncation = fyne.TextTruncateEllipsis
	brk := newKeyCheck(p.keys, "break", nil)
	rm := newKeyButton(p.keys, "", theme.DeleteIcon(), nil)
	rm.Importance = widget.LowImportance
	where := newKeyButton(p.keys, "", nil, nil)
	where.Importance = widget.LowImportance
	return container.NewBorder(nil, nil, expr, container.NewHBox(where, brk, rm), val)
}

func (p *watchPanel) updateRow(i widget.ListItemID, o fyne.CanvasObject) {
	ws := p.m.dbg.Watches
	if i >= len(ws) {
		return
	}
	w := ws[i]
	line := o.(*fyne.Container)
	val, expr := line.Objects[0].(*widget.Label), line.Objects[1].(*widget.Label)
	right := line.Objects[2].(*fyne.Container)
	where, brk, rm := right.Objects[0].(*keyButton), right.Objects[1].(*keyCheck), right.Objects[2].(*keyButton)
	expr.SetText(oneLine(w.Src, 20))
	text, imp := p.valueAt(i)
	val.Importance = imp
	val.SetText(text)
	spec := breakSpecOf(p.m, w)
	if spec == "" {
		brk.Hide()
	} else {
		brk.Show()
		brk.OnChanged = nil
		brk.SetChecked(p.m.dbg.hasBreak(spec))
		brk.OnChanged = func(on bool) {
			if on {
				_ = p.m.addBreak(spec)
			} else {
				p.m.removeBreak(spec)
			}
		}
	}
	rm.OnTapped = func() { p.m.removeWatch(i) }
	summary, jump := "", ""
	if i < len(p.summary) {
		summary, jump = p.summary[i], p.jump[i]
	}
	where.SetText(summary)
	where.OnTapped = func() {
		if jump != "" {
			p.m.pickSub("", "")
			p.m.selectCheckpoint(jump)
		}
	}
	if summary == "" {
		where.Hide()
	} else {
		where.Show()
		if jump == "" {
			where.Disable()
		} else {
			where.Enable()
		}
	}
}

// valueAt is watch i's value at the selected checkpoint, as text, with
// the importance it is shown in.
func (p *watchPanel) valueAt(i int) (string, widget.Importance) {
	w := p.m.dbg.Watches[i]
	if w.Err != nil {
		return exprErrText(w.Err), widget.DangerImportance
	}
	at := p.m.scope().dbg.at
	if at.ID == "" || at.ID != p.m.scope().sel || at.Gen != p.m.dbg.gen || i >= len(at.Vals) {
		return "…", widget.LowImportance
	}
	if err := at.Errs[i]; err != nil {
		return err.Error(), widget.DangerImportance
	}
	v := at.Vals[i]
	if b, ok := v.(bool); ok {
		if b {
			return "true", widget.SuccessImportance
		}
		return "false", widget.MediumImportance
	}
	return preview(toJSON(v), 80), widget.MediumImportance
}

// breakSpecOf is the breakpoint a watch's switch sets: when:EXPR for a
// condition, change:CH for a bare channel, "" for other expressions.
func breakSpecOf(m *model, w watchItem) string {
	if w.Expr == nil || m.dbg.env == nil {
		return ""
	}
	for _, ch := range m.dbg.env.Channels() {
		if ch == w.Src {
			return "change:" + w.Src
		}
	}
	if _, err := m.dbg.env.CompileBool(w.Src); err == nil && len(w.Expr.Reads()) > 0 {
		return "when:" + w.Src
	}
	return ""
}

// show redraws the rows and the progress along the thread.
func (p *watchPanel) show() {
	sc := p.m.scope()
	n := len(p.m.dbg.Watches)
	p.summary, p.jump = make([]string, n), make([]string, n)
	for i := range n {
		p.jump[i], p.summary[i] = firstChange(sc, i)
	}
	if n == 0 {
		p.empty.Show()
	} else {
		p.empty.Hide()
	}
	p.list.Refresh()
	cols := sc.dbg.cols
	switch {
	case n == 0 || sc.thread == "":
		p.prog.Hide()
		p.status.SetText("")
	case cols == nil:
		p.prog.Hide()
		p.status.SetText("Along the thread: after the run")
	case cols.Running:
		p.prog.Show()
		if cols.Total > 0 {
			p.prog.SetValue(float64(cols.Done) / float64(cols.Total))
		}
		p.status.SetText(fmt.Sprintf("Along the thread: %d of %d checkpoints…", cols.Done, cols.Total))
	case cols.Err != nil:
		p.prog.Hide()
		p.status.Importance = widget.DangerImportance
		p.status.SetText("Along the thread: " + cols.Err.Error())
		return
	default:
		p.prog.Hide()
		p.status.SetText(fmt.Sprintf("Along the thread: %d checkpoints in %s", len(cols.Rows), fmtDuration(cols.Took)))
	}
	p.status.Importance = widget.LowImportance
	p.status.Refresh()
}

// checkEntry checks the expression being typed.
func (p *watchPanel) checkEntry() {
	src := strings.TrimSpace(p.entry.Text)
	if src == "" {
		p.setCheck(watchHint, widget.LowImportance)
		if len(p.m.dbg.Watches) > 0 {
			p.check.Hide() // the rows show what a watch is
		}
		return
	}
	p.check.Show()
	w := p.m.dbg.compileWatch(src)
	if w.Err != nil {
		p.setCheck(exprErrText(w.Err), widget.DangerImportance)
		return
	}
	p.setCheck("OK · reads "+strings.Join(w.Expr.Reads(), ", ")+" · Enter adds it", widget.SuccessImportance)
}

func (p *watchPanel) setCheck(text string, imp widget.Importance) { setLabel(p.check, text, imp) }

// setLabel shows text in importance imp, refreshing l only when either
// changed.
func setLabel(l *widget.Label, text string, imp widget.Importance) {
	if l.Text != text || l.Importance != imp {
		l.Importance = imp
		l.SetText(text)
	}
}

// add adds the typed watch when it compiles.
func (p *watchPanel) add() {
	if err := p.m.addWatch(p.entry.Text); err != nil {
		p.setCheck(exprErrText(err), widget.DangerImportance)
		return
	}
	p.entry.SetText("")
}

// exprErrText is an expression error in a line a user reads at once.
func exprErrText(err error) string {
	var ee *inspect.ExprError
	if errors.As(err, &ee) {
		if ee.Column > 0 {
			return fmt.Sprintf("%s (column %d)", ee.Msg, ee.Column)
		}
		return ee.Msg
	}
	return err.Error()
}
