package studio

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// nodeMenu is the graph's context menu of a node: breakpoints before and
// after it, and the same with a condition (root nodes: the conditions are
// checked by the run's phase hook, which sees the root graph's steps).
func (s *Studio) nodeMenu(id string, _ bool, at fyne.Position) {
	m := s.m
	name := strings.ReplaceAll(id, "/", " › ")
	before := fyne.NewMenuItem("Break before "+name, func() { s.toggleBreakpoint(id, false) })
	before.Checked = m.brk.Before[id] || (m.brk.All && !strings.Contains(id, "/"))
	after := fyne.NewMenuItem("Break after "+name, func() { s.toggleBreakpoint(id, true) })
	after.Checked = m.brk.After[id]
	items := []*fyne.MenuItem{before, after, fyne.NewMenuItemSeparator()}
	if strings.Contains(id, "/") {
		note := fyne.NewMenuItem("Conditions go on the subgraph node", nil)
		note.Disabled = true
		items = append(items, note)
	} else {
		for _, side := range []bool{false, true} {
			side := side
			word := "before"
			if side {
				word = "after"
			}
			label := fmt.Sprintf("Break %s %s if…", word, name)
			if c := m.dbg.nodeCond(id, side); c != "" {
				label = fmt.Sprintf("Break %s %s if %s…", word, name, oneLine(c, 40))
			}
			it := fyne.NewMenuItem(label, func() { s.condDialog(id, side) })
			it.Checked = m.dbg.nodeCond(id, side) != ""
			items = append(items, it)
		}
	}
	widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", items...), s.win.Canvas(), at)
}

// condForm is the condition dialog.
type condForm struct {
	composite
	dlg     dialog.Dialog
	entry   *keyEntry
	errLbl  *widget.Label
	okB     *widget.Button
	removeB *widget.Button
}

// condDialog asks for the condition of the breakpoint before (or after)
// node, checked as it is typed; Remove takes the conditional breakpoint
// away.
func (s *Studio) condDialog(node string, after bool) {
	m := s.m
	if m.dbg.env == nil {
		return
	}
	word := "before"
	if after {
		word = "after"
	}
	f := &condForm{entry: newKeyEntry(s.acts.key, false)}
	f.entry.TextStyle.Monospace = true
	f.entry.SetPlaceHolder("revisions > 1")
	old := m.dbg.nodeCond(node, after)
	f.entry.SetText(old)
	q := widget.NewLabel(fmt.Sprintf("Stop the run %s %s runs, only when this holds on the state %s:", word, node, map[bool]string{false: "it starts from", true: "it leads to"}[after]))
	q.Wrapping = fyne.TextWrapWord
	f.errLbl = widget.NewLabel("")
	f.errLbl.Wrapping = fyne.TextWrapWord
	check := func(text string) {
		text = strings.TrimSpace(text)
		if text == "" {
			f.errLbl.Importance = widget.LowImportance
			f.errLbl.SetText("The channels are " + strings.Join(m.dbg.env.Channels(), ", "))
			f.okB.Disable()
			return
		}
		if _, err := m.dbg.env.CompileBool(text); err != nil {
			f.errLbl.Importance = widget.DangerImportance
			f.errLbl.SetText(exprErrText(err))
			f.okB.Disable()
			return
		}
		f.errLbl.Importance = widget.SuccessImportance
		f.errLbl.SetText("OK")
		f.okB.Enable()
	}
	set := func() {
		if f.okB.Disabled() {
			return
		}
		if err := m.setNodeCond(node, after, f.entry.Text); err != nil {
			f.errLbl.Importance = widget.DangerImportance
			f.errLbl.SetText(exprErrText(err))
			return
		}
		f.dlg.Hide()
	}
	f.okB = widget.NewButton("Set", set)
	f.okB.Importance = widget.HighImportance
	f.removeB = widget.NewButton("Remove", func() {
		_ = m.setNodeCond(node, after, "")
		f.dlg.Hide()
	})
	if old == "" {
		f.removeB.Disable()
	}
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	f.entry.OnChanged = check
	f.entry.OnSubmitted = func(string) { set() }
	check(f.entry.Text)
	buttons := container.NewHBox(f.removeB, layoutSpacer(), cancel, f.okB)
	content := container.NewVBox(q, f.entry, f.errLbl, buttons)
	f.dlg = dialog.NewCustomWithoutButtons(fmt.Sprintf("Break %s %s if…", word, node), f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(560, 230))
	showDialog(f.dlg, content)
	s.win.Canvas().Focus(f.entry)
}
