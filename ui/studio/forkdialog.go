package studio

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
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
	// kept is the value written when it is too large to edit in a field
	// (over maxEditBytes): the stored one, or a file's; nil while the
	// editor holds the value.
	kept     []byte
	fromFile *widget.Button
}

// maxEditBytes is the largest value the dialog puts in its editor: a Fyne
// entry lays out its whole text, and a megabyte froze the window.
const maxEditBytes = 64 << 10

const inferAs = "(infer from the checkpoint)"

// editDialog opens the editor for a channel of the selected checkpoint;
// Fork writes it as a new branch. A text channel is edited as text in a
// multi-line field; any other as JSON. Fork stays disabled until the value
// is one the channel takes.
func (s *Studio) editDialog() {
	sc := s.m.scope()
	v := sc.viewFor()
	if v == nil || s.refuseView() {
		return
	}
	g := s.m.graph()
	if g.Graph == nil {
		return
	}
	if g.Graph.IsView() && !g.Graph.ViewUpdates() {
		s.refuseEngineOnly()
		return
	}
	chans := g.Graph.Channels()
	onServer := g.Graph.IsView()
	if onServer {
		// A server's graph declares no channels here: its state's keys
		// are what can be edited, as JSON.
		for _, k := range slices.Sorted(maps.Keys(v.Snap.Values)) {
			chans = append(chans, engine.ChannelInfo{Name: k, Type: "any value"})
		}
	}
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
		if f.kept != nil {
			return f.kept
		}
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
			if f.kept == nil && !f.text && !json.Valid([]byte(f.editor.Text)) {
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
		f.kept = nil
		f.editor.Enable()
		f.fromFile.Hide()
		switch {
		case f.text:
			str, _ := cur.(string)
			if len(str) > maxEditBytes {
				b, _ := json.Marshal(str)
				f.keep(b, fmt.Sprintf("text of %s: too large to edit here, so the fork writes it as it is, unless you replace it from a file (its text, as it is)", byteSize(len(str))))
				break
			}
			f.editor.SetText(str)
			f.hint.SetText("text: written as it is, new lines included")
		case has:
			js := toJSON(cur)
			if b, err := json.Marshal(js); err == nil && len(b) > maxEditBytes {
				f.keep(b, fmt.Sprintf("JSON of %s, %s: too large to edit here, so the fork writes it as it is, unless you replace it from a file (JSON)", chans[i].Type, byteSize(len(b))))
				break
			}
			f.editor.SetText(prettyJSON(js))
			f.hint.SetText("JSON of " + chans[i].Type)
		default:
			f.editor.SetText("null")
			f.hint.SetText("JSON of " + chans[i].Type)
		}
		validate()
	})
	f.editor.OnChanged = func(string) { validate() }
	f.fromFile = widget.NewButtonWithIcon("Replace from file…", theme.FolderOpenIcon(), func() {
		dialog.ShowFileOpen(func(r fyne.URIReadCloser, err error) {
			if err != nil || r == nil {
				if err != nil {
					f.errLbl.SetText(err.Error())
				}
				return
			}
			defer r.Close()
			b, err := io.ReadAll(io.LimitReader(r, int64(checkpoint.MaxValueSize)+1))
			if err != nil {
				f.errLbl.SetText(fmt.Sprintf("reading %s: %v", r.URI().Name(), err))
				return
			}
			f.replaceFrom(r.URI().Name(), b)
			validate()
		}, s.win)
	})
	f.fromFile.Hide()
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
	if onServer {
		help.SetText("The server writes the new value (its update_state) in a new checkpoint after this one, as if the chosen node returned it: it goes through the channel's reducer, so a list with one gets the value added, not replaced. The old branch stays in the timeline. Fork and run continues the new branch at once; after Fork alone, Run or Step does.")
	}
	help.Wrapping = fyne.TextWrapWord
	form := widget.NewForm(widget.NewFormItem("Channel", f.ch), widget.NewFormItem("As node", f.asNode))
	form.Append("", f.fromFile)
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	content := container.NewBorder(container.NewVBox(help, form, f.hint), container.NewVBox(f.errLbl, container.NewHBox(layoutSpacer(), cancel, f.forkB, f.forkRunB)), nil, nil, f.editor)
	f.dlg = dialog.NewCustomWithoutButtons(fmt.Sprintf("Edit state at step %d and fork", v.Snap.Metadata.Step), f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(640, 520))
	showDialog(f.dlg, content)
}

// keep makes b, a value too large for the editor, the one the fork writes,
// and says so in the hint.
func (f *forkForm) keep(b []byte, hint string) {
	f.kept = b
	f.editor.SetText("")
	f.editor.Disable()
	f.hint.SetText(hint)
	f.fromFile.Show()
}

// replaceFrom makes a file's content the value to write: a text channel
// takes it as it is, any other as JSON. What is not a value the channel
// can take (too large, not JSON) is refused in the error line.
func (f *forkForm) replaceFrom(name string, b []byte) {
	if len(b) > checkpoint.MaxValueSize {
		f.errLbl.SetText(fmt.Sprintf("%s is over %s, the largest value a store keeps", name, byteSize(checkpoint.MaxValueSize)))
		return
	}
	if f.text {
		b, _ = json.Marshal(string(b))
	} else if !json.Valid(b) {
		f.errLbl.SetText(name + " is not JSON: " + jsonHint(string(b)))
		return
	}
	f.kept = b
	f.hint.SetText(fmt.Sprintf("from %s, %s: the fork writes it", name, byteSize(len(b))))
}
