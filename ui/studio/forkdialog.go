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

// forkForm is the edit-and-fork dialog.
type forkForm struct {
	composite
	dlg    dialog.Dialog
	ch     *widget.Select
	asNode *widget.Select
	editor *widget.Entry
	hint   *widget.Label
	errLbl *widget.Label
	forkB  *widget.Button
	// forkRunB forks and runs the new branch to its next stop.
	forkRunB *widget.Button
	text     bool // the channel holds text: the editor has the text itself, not JSON
}

const inferAs = "(infer from the checkpoint)"

// editDialog opens the editor for a channel of the selected checkpoint;
// Fork writes it as a new branch. A text channel is edited as text in a
// multi-line field; any other as JSON. Fork stays disabled until the value
// is one the channel takes.
func (s *Studio) editDialog() {
	sc := s.m.scope()
	v := sc.viewFor()
	if v == nil {
		return
	}
	g := s.m.graph()
	if g.Graph == nil {
		return
	}
	chans := g.Graph.Channels()
	nodes := g.Graph.Nodes()
	f := &forkForm{}
	var names []string
	for _, ch := range chans {
		names = append(names, ch.Name)
	}
	f.editor = widget.NewMultiLineEntry()
	f.editor.TextStyle.Monospace = true
	f.editor.SetMinRowsVisible(10)
	f.hint = widget.NewLabel("")
	f.hint.Importance = widget.LowImportance
	f.hint.SizeName = theme.SizeNameCaptionText
	f.errLbl = widget.NewLabel("")
	f.errLbl.Importance = widget.DangerImportance
	f.errLbl.Wrapping = fyne.TextWrapWord
	value := func() []byte {
		if f.text {
			b, _ := json.Marshal(f.editor.Text)
			return b
		}
		return []byte(f.editor.Text)
	}
	validate := func() bool {
		ok := func() bool {
			if f.ch.Selected == "" {
				f.errLbl.SetText("choose a channel")
				return false
			}
			if !f.text && !json.Valid([]byte(f.editor.Text)) {
				f.errLbl.SetText(jsonHint(f.editor.Text))
				return false
			}
			if _, err := s.sess.replaceWrite(f.ch.Selected, value()); err != nil {
				f.errLbl.SetText(err.Error())
				return false
			}
			f.errLbl.SetText("")
			return true
		}()
		if f.forkB != nil {
			for _, b := range []*widget.Button{f.forkB, f.forkRunB} {
				if ok {
					b.Enable()
				} else {
					b.Disable()
				}
			}
		}
		return ok
	}
	f.ch = widget.NewSelect(names, func(name string) {
		i := slices.IndexFunc(chans, func(c engine.ChannelInfo) bool { return c.Name == name })
		f.text = i >= 0 && isStringChan(chans[i])
		cur, has := v.Snap.Values[name]
		switch {
		case f.text:
			str, _ := cur.(string)
			f.editor.SetText(str)
			f.hint.SetText("text: written as it is, new lines included")
		case has:
			f.editor.SetText(prettyJSON(toJSON(cur)))
			f.hint.SetText("JSON of " + chans[i].Type)
		default:
			f.editor.SetText("null")
			f.hint.SetText("JSON of " + chans[i].Type)
		}
		validate()
	})
	f.editor.OnChanged = func(string) { validate() }
	f.asNode = widget.NewSelect(append([]string{inferAs}, nodes...), nil)
	f.asNode.SetSelected(inferAs)
	if ran := uniq(v.Snap.Metadata.Tasks); len(ran) == 1 && slices.Contains(nodes, ran[0]) {
		f.asNode.SetSelected(ran[0])
	}
	doFork := func(run bool) {
		if !validate() {
			return
		}
		as := f.asNode.Selected
		if as == inferAs {
			as = ""
		}
		f.forkB.Disable()
		f.forkRunB.Disable()
		s.forkAt(sc, v.Snap.Ref.CheckpointID, f.ch.Selected, value(), as, run, func(err error) {
			if err != nil {
				f.errLbl.SetText(explain(err).Error())
				validate()
				return
			}
			f.dlg.Hide()
		})
	}
	f.forkB = widget.NewButtonWithIcon("Fork", theme.ContentCopyIcon(), func() { doFork(false) })
	f.forkRunB = widget.NewButtonWithIcon("Fork and run", theme.MediaPlayIcon(), func() { doFork(true) })
	f.forkB.Importance = widget.HighImportance
	f.forkB.Disable()
	f.forkRunB.Disable()
	// The channel picked in the inspector, if it is one of this graph's.
	sel := s.insp.selCh
	if !slices.Contains(names, sel) && len(names) > 0 {
		sel = names[0]
	}
	if sel != "" {
		f.ch.SetSelected(sel)
	}
	help := widget.NewLabel("The new value replaces the channel's value (reducers are skipped) in a new checkpoint after this one, written as if the chosen node returned it. The old branch stays in the timeline. Fork and run continues the new branch at once; after Fork alone, Run or Step does.")
	help.Wrapping = fyne.TextWrapWord
	form := widget.NewForm(widget.NewFormItem("Channel", f.ch), widget.NewFormItem("As node", f.asNode))
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	content := container.NewBorder(container.NewVBox(help, form, f.hint), container.NewVBox(f.errLbl, container.NewHBox(layoutSpacer(), cancel, f.forkB, f.forkRunB)), nil, nil, f.editor)
	f.dlg = dialog.NewCustomWithoutButtons(fmt.Sprintf("Edit state at step %d and fork", v.Snap.Metadata.Step), f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(640, 520))
	showDialog(f.dlg, content)
}
