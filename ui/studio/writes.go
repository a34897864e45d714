package studio

import (
	"encoding/json"
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// debugActions are what the debugger's panels ask the studio to do; nil
// funcs do nothing.
type debugActions struct {
	stepInto func()
	phaseGo  func(mode stepMode, pause bool)
	// replace asks the user for a new value of a write to channel (cur
	// is the value written) and calls done with it.
	replace func(channel string, cur any, done func(v any))
	whatIf  func()
}

// writesEditor lists a step's writes task by task, each with a check
// (checked: it applies; unchecked: dropped) and a Replace… button; a task's
// own check keeps or drops all its writes. It tells onChange the edits.
type writesEditor struct {
	obj      *fyne.Container
	keys     keyFunc
	replace  func(channel string, cur any, done func(v any))
	onChange func([]engine.StepEdit)
	tasks    []engine.TaskState
	edits    []engine.StepEdit
	readOnly bool
	// sends are the Send packets each task wrote, by task id: listed
	// under its state writes, read-only (they are the next step's tasks,
	// which edits do not reach).
	sends map[string][]sendPacket
	// checks are the write checks, by task index then write index.
	checks   [][]*keyCheck
	replaceB [][]*keyButton
	taskC    []*keyCheck
}

func newWritesEditor(keys keyFunc, replace func(string, any, func(any)), onChange func([]engine.StepEdit)) *writesEditor {
	return &writesEditor{obj: container.NewVBox(), keys: keys, replace: replace, onChange: onChange}
}

// set shows tasks' writes with edits applied.
func (w *writesEditor) set(tasks []engine.TaskState, edits []engine.StepEdit) {
	w.tasks, w.edits = tasks, slices.Clone(edits)
	w.rebuild()
}

// edit returns the edit of write i of task id, nil when it applies as
// written.
func (w *writesEditor) edit(id string, i int) *engine.StepEdit {
	for k := range w.edits {
		if e := &w.edits[k]; e.TaskID == id && e.Write == i {
			return e
		}
	}
	return nil
}

// setEdit replaces the edit of write i of task id (nil: none).
func (w *writesEditor) setEdit(id string, i int, e *engine.StepEdit) {
	w.edits = slices.DeleteFunc(w.edits, func(x engine.StepEdit) bool { return x.TaskID == id && x.Write == i })
	if e != nil {
		w.edits = append(w.edits, *e)
	}
	w.rebuild()
	if w.onChange != nil {
		w.onChange(slices.Clone(w.edits))
	}
}

func (w *writesEditor) rebuild() {
	w.obj.Objects = nil
	w.checks, w.replaceB, w.taskC = nil, nil, nil
	for _, t := range w.tasks {
		t := t
		label := taskLabel(w.tasks, t.ID)
		var rowChecks []*keyCheck
		var rowButtons []*keyButton
		if len(t.Result) == 0 {
			text := label + " · wrote nothing"
			if n := len(w.sends[t.ID]); n > 0 {
				text = label + " · " + plural(n, "Send")
			}
			l := widget.NewLabel(text)
			if len(w.sends[t.ID]) == 0 {
				l.Importance = widget.LowImportance
			}
			w.obj.Add(l)
			w.addSends(t.ID)
			w.checks, w.replaceB = append(w.checks, nil), append(w.replaceB, nil)
			w.taskC = append(w.taskC, nil)
			continue
		}
		kept := 0
		for i := range t.Result {
			if e := w.edit(t.ID, i); e == nil || !e.Drop {
				kept++
			}
		}
		headText := fmt.Sprintf("%s · %d of %d writes apply", label, kept, len(t.Result))
		if len(t.Result) == 1 {
			headText = label
		}
		head := newKeyCheck(w.keys, headText, nil)
		head.Checked = kept > 0
		head.OnChanged = func(on bool) {
			for i := range t.Result {
				e := w.edit(t.ID, i)
				switch {
				case on && e != nil && e.Drop:
					w.edits = slices.DeleteFunc(w.edits, func(x engine.StepEdit) bool { return x.TaskID == t.ID && x.Write == i })
				case !on:
					w.edits = slices.DeleteFunc(w.edits, func(x engine.StepEdit) bool { return x.TaskID == t.ID && x.Write == i })
					w.edits = append(w.edits, engine.StepEdit{TaskID: t.ID, Write: i, Drop: true})
				}
			}
			w.rebuild()
			if w.onChange != nil {
				w.onChange(slices.Clone(w.edits))
			}
		}
		if w.readOnly {
			head.Disable()
		}
		w.taskC = append(w.taskC, head)
		if len(t.Result) > 1 {
			w.obj.Add(head)
		}
		for i, wr := range t.Result {
			i, wr := i, wr
			e := w.edit(t.ID, i)
			val := wr.Value
			note := ""
			switch {
			case e != nil && e.Drop:
				note = "dropped"
			case e != nil:
				val, note = e.Value, "replaced"
			}
			c := newKeyCheck(w.keys, wr.Channel, func(on bool) {
				if on {
					w.setEdit(t.ID, i, nil)
				} else {
					w.setEdit(t.ID, i, &engine.StepEdit{TaskID: t.ID, Write: i, Drop: true})
				}
			})
			c.Checked = e == nil || !e.Drop
			v := widget.NewLabel(preview(toJSON(val), 90))
			v.Truncation = fyne.TextTruncateEllipsis
			if note != "" {
				v.SetText(note + " · " + v.Text)
				v.Importance = widget.WarningImportance
			}
			b := newKeyButton(w.keys, "Replace…", theme.DocumentCreateIcon(), func() {
				if w.replace == nil {
					return
				}
				cur := wr.Value
				if e := w.edit(t.ID, i); e != nil && !e.Drop {
					cur = e.Value
				}
				w.replace(wr.Channel, cur, func(nv any) {
					w.setEdit(t.ID, i, &engine.StepEdit{TaskID: t.ID, Write: i, Value: nv})
				})
			})
			b.Importance = widget.LowImportance
			if w.readOnly {
				c.Disable()
				b.Disable()
			}
			rowChecks = append(rowChecks, c)
			rowButtons = append(rowButtons, b)
			if len(t.Result) == 1 {
				// One write: the task's check is the write's.
				c = head
				c.Text = label + " → " + wr.Channel
				rowChecks[len(rowChecks)-1] = c
				w.obj.Add(container.NewBorder(nil, nil, c, b, v))
				continue
			}
			w.obj.Add(container.NewBorder(nil, nil, container.NewHBox(widget.NewLabel("  "), c), b, v))
		}
		w.addSends(t.ID)
		w.checks = append(w.checks, rowChecks)
		w.replaceB = append(w.replaceB, rowButtons)
	}
	w.obj.Refresh()
}

// channelSummary says, per channel the tasks write, how many writes from
// which nodes and which reducer combines them: "notes ← research ×3 ·
// append".
func channelSummary(tasks []engine.TaskState, edits []engine.StepEdit, chans []engine.ChannelInfo) []string {
	by := map[string][]string{}
	for _, t := range tasks {
		for i, wr := range t.Result {
			if slices.ContainsFunc(edits, func(e engine.StepEdit) bool { return e.TaskID == t.ID && e.Write == i && e.Drop }) {
				continue
			}
			by[wr.Channel] = append(by[wr.Channel], t.Name)
		}
	}
	var out []string
	for _, ch := range chans {
		names, ok := by[ch.Name]
		if !ok {
			continue
		}
		var how string
		switch {
		case ch.Reducer != "":
			how = "combined by " + ch.Reducer
		case ch.Kind == "topic":
			how = "collected (topic)"
		case ch.Kind == "any_value":
			how = "any one of them (any value)"
		case len(names) == 1:
			how = "replaces the value (" + reducerName(ch) + ")"
		default:
			how = reducerName(ch) + ": more than one write in a step is an error"
		}
		out = append(out, fmt.Sprintf("%s ← %s · %s", ch.Name, joinNames(names), how))
	}
	return out
}

// valueForm is the dialog that edits one value.
type valueForm struct {
	composite
	dlg    dialog.Dialog
	entry  *keyEntry
	errLbl *widget.Label
	okB    *widget.Button
}

// valueDialog asks for a new value in place of cur: text as it is for a
// text value, JSON otherwise, checked by decode as it is typed (the button
// stays disabled while the value is not one the channel takes); done gets
// the decoded value.
func (s *Studio) valueDialog(title, channel string, cur any, decode func([]byte) (any, error), done func(v any)) {
	_, isText := cur.(string)
	f := &valueForm{entry: newKeyEntry(s.acts.key, true)}
	f.entry.SetMinRowsVisible(8)
	hint := widget.NewLabel(fmt.Sprintf("The new value of this write to %s, as JSON.", channel))
	if isText {
		f.entry.SetText(cur.(string))
		hint.SetText(fmt.Sprintf("The new text of this write to %s.", channel))
	} else {
		f.entry.TextStyle.Monospace = true
		f.entry.SetText(prettyJSON(toJSON(cur)))
	}
	hint.Importance = widget.LowImportance
	hint.Wrapping = fyne.TextWrapWord
	f.errLbl = widget.NewLabel("")
	f.errLbl.Importance = widget.DangerImportance
	f.errLbl.Wrapping = fyne.TextWrapWord
	var val any
	check := func(text string) {
		data := []byte(text)
		if isText {
			data, _ = json.Marshal(text)
		}
		v, err := decode(data)
		if err != nil {
			msg := err.Error()
			if h := jsonHint(text); h != "" && !isText {
				msg = h
			}
			f.errLbl.SetText(msg)
			f.okB.Disable()
			return
		}
		val = v
		f.errLbl.SetText("")
		f.okB.Enable()
	}
	f.okB = widget.NewButton("Replace", func() {
		f.dlg.Hide()
		done(val)
	})
	f.okB.Importance = widget.HighImportance
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	f.entry.OnChanged = check
	check(f.entry.Text)
	content := container.NewBorder(hint, container.NewVBox(f.errLbl, container.NewHBox(layoutSpacer(), cancel, f.okB)), nil, nil, f.entry)
	f.dlg = dialog.NewCustomWithoutButtons(title, f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(560, 360))
	showDialog(f.dlg, content)
	s.win.Canvas().Focus(f.entry)
}

// addSends lists the Send packets task id wrote, one row each.
func (w *writesEditor) addSends(id string) {
	for _, p := range w.sends[id] {
		l := widget.NewLabel("Send → " + p.Node + "  " + preview(p.Arg, 120))
		l.Truncation = fyne.TextTruncateEllipsis
		l.TextStyle.Monospace = true
		w.obj.Add(l)
	}
}
