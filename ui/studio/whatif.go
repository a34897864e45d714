package studio

// What if: the step that ran from the selected checkpoint, with some of
// its tasks' writes dropped or replaced, recomputed through the channels'
// reducers without running any node (engine.Graph.Recompute); the state
// it leads to is shown next to the one the step really led to, the
// channels that differ marked. Keep as fork stores it (ForkEdited): a
// fork of that checkpoint whose history lists the edits.

import (
	"context"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint"
	"github.com/weftstudio/weft/engine"
)

// whatIfForm is the what-if dialog.
type whatIfForm struct {
	composite
	dlg    dialog.Dialog
	from   string // the checkpoint the step ran from
	writes *writesEditor
	state  *fyne.Container // the recomputed channels
	next   *widget.Label
	status *widget.Label
	keepB  *widget.Button
	edits  []engine.StepEdit
	base   *engine.Snapshot // the step as it ran, recomputed without edits
	result *engine.Snapshot // with the edits
	seq    int              // recomputations asked for; older answers are dropped
	// changed lists the channels the edits change, for the status line.
	changed []string
}

// whatIfDialog opens the what-if of the step that ran from the selected
// checkpoint.
func (s *Studio) whatIfDialog() {
	sc := s.m.scope()
	v := sc.viewFor()
	if v == nil || s.m.graph().Graph == nil || s.refuseEngineOnly() {
		return
	}
	f := &whatIfForm{from: v.Snap.Ref.CheckpointID}
	f.writes = newWritesEditor(s.acts.key, s.replaceDialog, func(e []engine.StepEdit) {
		f.edits = e
		s.recompute(sc, f)
	})
	f.state = container.NewVBox()
	f.next = widget.NewLabel("")
	f.next.Wrapping = fyne.TextWrapWord
	f.status = widget.NewLabel("Reading the step…")
	f.status.Wrapping = fyne.TextWrapWord
	f.keepB = widget.NewButtonWithIcon("Keep as fork", theme.ContentCopyIcon(), func() { s.keepWhatIf(sc, f) })
	f.keepB.Importance = widget.HighImportance
	f.keepB.Disable()
	cancel := widget.NewButton("Close", func() { f.dlg.Hide() })

	at := shortID(f.from)
	if i := sc.tl.at(f.from); i >= 0 {
		label, _ := sc.tl.text(i)
		at = "“" + label + "”"
	}
	head := widget.NewLabel(fmt.Sprintf("The step that ran from checkpoint %s. Untick a task's write to drop it, or replace its value: "+
		"the state is recomputed through the reducers, no node runs.", at))
	head.Wrapping = fyne.TextWrapWord
	leftTitle := widget.NewLabelWithStyle("Writes of the step", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	rightTitle := widget.NewLabelWithStyle("The state it leads to", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	left := container.NewBorder(leftTitle, nil, nil, nil, container.NewVScroll(f.writes.obj))
	right := container.NewBorder(rightTitle, f.next, nil, nil, container.NewVScroll(f.state))
	split := container.NewHSplit(left, right)
	split.Offset = 0.5
	bottom := container.NewBorder(nil, nil, nil, container.NewHBox(cancel, f.keepB), f.status)
	content := container.NewBorder(head, bottom, nil, nil, split)
	f.dlg = dialog.NewCustomWithoutButtons("What if…", f.compose(f, content), s.win)
	f.dlg.Resize(fyne.NewSize(1000, 620))
	showDialog(f.dlg, content)
	s.recompute(sc, f)
}

// recompute recomputes f's step with its edits off the UI goroutine (and,
// the first time, without them: the step as it ran).
func (s *Studio) recompute(sc *scope, f *whatIfForm) {
	f.seq++
	seq := f.seq
	edits := append([]engine.StepEdit(nil), f.edits...)
	needBase := f.base == nil
	g, _ := s.sess.current()
	thread := sc.thread
	type res struct {
		base, result *engine.Snapshot
		tasks        []engine.TaskState
	}
	f.keepB.Disable()
	goBG(s.sess, func() (res, error) {
		var r res
		ctx := context.Background()
		opts := []engine.RunOption{engine.WithThread(thread), engine.WithCheckpoint(f.from)}
		if needBase {
			snap, err := g.GetState(ctx, opts...)
			if err != nil {
				return r, err
			}
			r.tasks = snap.Tasks
			if r.base, err = g.Recompute(ctx, nil, opts...); err != nil {
				return r, err
			}
		}
		var err error
		r.result, err = g.Recompute(ctx, edits, opts...)
		return r, err
	}, func(r res, err error) {
		if seq != f.seq {
			return
		}
		if err != nil {
			f.status.Importance = widget.DangerImportance
			f.status.SetText(explain(err).Error())
			return
		}
		if r.base != nil {
			f.base = r.base
			f.writes.set(r.tasks, f.edits)
		}
		f.result = r.result
		s.showWhatIf(f)
	})
}

// showWhatIf shows the recomputed state, the channels that differ from
// the step as it ran marked.
func (s *Studio) showWhatIf(f *whatIfForm) {
	f.state.Objects = nil
	f.changed = nil
	for _, ch := range s.m.channels() {
		nv, has := f.result.Values[ch.Name]
		ov, had := f.base.Values[ch.Name]
		if !has && !had {
			continue
		}
		name := widget.NewLabelWithStyle(ch.Name, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		val := widget.NewLabel("(empty)")
		if has {
			val.SetText(preview(toJSON(nv), 90))
		}
		val.Truncation = fyne.TextTruncateEllipsis
		row := container.NewBorder(nil, nil, name, nil, val)
		if has != had || !jsonEqual(toJSON(nv), toJSON(ov)) {
			f.changed = append(f.changed, ch.Name)
			mark := widget.NewLabel("changed")
			mark.Importance = widget.WarningImportance
			was := widget.NewLabel("was (empty)")
			if had {
				was.SetText("was " + preview(toJSON(ov), 80))
			}
			was.Importance = widget.LowImportance
			was.Truncation = fyne.TextTruncateEllipsis
			row = container.New(&tightVBox{}, container.NewBorder(nil, nil, name, mark, val), was)
		}
		f.state.Add(row)
	}
	f.state.Refresh()
	next := "Next: the graph ends here"
	if len(f.result.Next) > 0 {
		next = "Next: " + joinNames(f.result.Next)
	}
	if before := joinNames(f.base.Next); before != joinNames(f.result.Next) {
		next += " (as it ran: " + before + ")"
	}
	f.next.SetText(next)
	f.status.Importance = widget.MediumImportance
	switch {
	case len(f.edits) == 0:
		f.status.SetText("No write edited: this is the step as it ran.")
	case len(f.changed) == 0:
		f.status.SetText(fmt.Sprintf("%d edited; no channel comes out different.", len(f.edits)))
	default:
		verb := "comes"
		if len(f.changed) > 1 {
			verb = "come"
		}
		f.status.SetText(fmt.Sprintf("%d edited; %s %s out different. Keep as fork stores this as a new branch.", len(f.edits), strings.Join(f.changed, ", "), verb))
	}
	if len(f.edits) > 0 && !s.m.run.Going {
		f.keepB.Enable()
	} else {
		f.keepB.Disable()
	}
}

// keepWhatIf stores the edited step as a fork and shows it.
func (s *Studio) keepWhatIf(sc *scope, f *whatIfForm) {
	edits := append([]engine.StepEdit(nil), f.edits...)
	thread, from := sc.thread, f.from
	g, _ := s.sess.current()
	f.keepB.Disable()
	goBG(s.sess, func() (*view, error) {
		ctx := context.Background()
		ref, err := g.ForkEdited(ctx, edits, engine.WithThread(thread), engine.WithCheckpoint(from))
		if err != nil {
			return nil, err
		}
		return s.sess.load(ctx, thread, ref.CheckpointID, true)
	}, func(v *view, err error) {
		if err != nil {
			f.status.Importance = widget.DangerImportance
			f.status.SetText("Keeping the fork: " + explain(err).Error())
			f.keepB.Enable()
			return
		}
		f.dlg.Hide()
		if sc != s.m.scope() {
			return
		}
		s.m.update(func() {
			s.showView(sc, v)
			s.m.setStatus(sc, "forked with edited writes · Run or Step continues the new branch")
		})
	})
}

// editsText says what a checkpoint made from edited writes changed, from
// its metadata: "dropped write's feedback, replaced write's draft".
func editsText(md checkpoint.Metadata) string {
	var parts []string
	for _, m := range editsOf(md) {
		verb := "replaced"
		if d, _ := m["dropped"].(bool); d {
			verb = "dropped"
		}
		parts = append(parts, fmt.Sprintf("%s %v's %v", verb, m["node"], m["channel"]))
	}
	return strings.Join(parts, ", ")
}

// editsOf returns the edits a checkpoint's metadata lists (as stored, or
// as read back from JSON).
func editsOf(md checkpoint.Metadata) []map[string]any {
	switch l := md.Extra[engine.MetaEdits].(type) {
	case []map[string]any:
		return l
	case []any:
		var out []map[string]any
		for _, e := range l {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}
