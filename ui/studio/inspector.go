package studio

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/engine"
)

// inspector is the right column: the channels of the selected checkpoint as
// a tree (changed ones marked), a JSON view, the diff against the parent
// checkpoint with who wrote each change, and channel versions.
type inspector struct {
	s        *Studio
	obj      fyne.CanvasObject
	title    *widget.Label
	tree     *widget.Tree
	json     *widget.RichText
	diff     *widget.List
	vers     *widget.List
	tasks    *widget.List
	taskRows [][2]string
	tabs     *container.AppTabs
	forkB    *widget.Button
	rerunB   *widget.Button
	nodes    map[string]*tnode
	roots    []string
	values   map[string]any // channel → JSON data
	changes  []diffRow
	verRows  []string
	selCh    string
}

// tnode is one row of the state tree.
type tnode struct {
	key, value string
	children   []string
	changed    bool
}

// diffRow is one line of the Diff tab.
type diffRow struct {
	Channel string
	change
	By string // "research via append"
}

const sep = "\x1f"

func newInspector(s *Studio) *inspector {
	in := &inspector{s: s, nodes: map[string]*tnode{}}
	in.title = widget.NewLabel("Start or pick a thread: the state at the selected checkpoint shows here.")
	in.title.Wrapping = fyne.TextWrapWord
	in.tree = widget.NewTree(
		func(id widget.TreeNodeID) []widget.TreeNodeID {
			if id == "" {
				return in.roots
			}
			if n := in.nodes[id]; n != nil {
				return n.children
			}
			return nil
		},
		func(id widget.TreeNodeID) bool {
			if id == "" {
				return true
			}
			n := in.nodes[id]
			return n != nil && len(n.children) > 0
		},
		func(bool) fyne.CanvasObject {
			key := widget.NewLabel("key")
			key.TextStyle.Bold = true
			val := widget.NewLabel("value")
			val.Truncation = fyne.TextTruncateEllipsis
			mark := widget.NewLabel("changed")
			mark.Importance = widget.WarningImportance
			mark.SizeName = theme.SizeNameCaptionText
			return container.NewBorder(nil, nil, key, mark, val)
		},
		func(id widget.TreeNodeID, _ bool, o fyne.CanvasObject) {
			n := in.nodes[id]
			if n == nil {
				return
			}
			c := o.(*fyne.Container)
			c.Objects[1].(*widget.Label).SetText(n.key)
			c.Objects[0].(*widget.Label).SetText(n.value)
			mark := c.Objects[2].(*widget.Label)
			if n.changed {
				mark.Show()
			} else {
				mark.Hide()
			}
		})
	in.tree.OnSelected = func(id widget.TreeNodeID) {
		s.keepKeys()
		ch, _, _ := strings.Cut(id, sep)
		in.selCh = ch
		in.showJSON()
	}
	in.json = widget.NewRichText()
	in.json.Wrapping = fyne.TextWrapOff
	in.diff = widget.NewList(func() int { return len(in.changes) },
		func() fyne.CanvasObject {
			kind := widget.NewLabel("changed")
			kind.TextStyle.Bold = true
			path := widget.NewLabel("path")
			path.TextStyle.Monospace = true
			val := widget.NewLabel("value")
			val.Truncation = fyne.TextTruncateEllipsis
			by := widget.NewLabel("by")
			by.Importance = widget.LowImportance
			by.SizeName = theme.SizeNameCaptionText
			by.Truncation = fyne.TextTruncateEllipsis
			return container.New(&tightVBox{}, container.NewBorder(nil, nil, container.NewHBox(kind, path), nil, val), by)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			r := in.changes[i]
			top := o.(*fyne.Container).Objects[0].(*fyne.Container)
			left := top.Objects[1].(*fyne.Container)
			kind := left.Objects[0].(*widget.Label)
			kind.SetText(map[string]string{"added": "+", "removed": "−", "changed": "~"}[r.Kind])
			kind.Importance = map[string]widget.Importance{"added": widget.SuccessImportance, "removed": widget.DangerImportance, "changed": widget.WarningImportance}[r.Kind]
			kind.Refresh()
			left.Objects[1].(*widget.Label).SetText(r.Path)
			val := top.Objects[0].(*widget.Label)
			switch r.Kind {
			case "added":
				val.SetText(preview(r.New, 80))
			case "removed":
				val.SetText(preview(r.Old, 80))
			default:
				val.SetText(preview(r.Old, 36) + " → " + preview(r.New, 36))
			}
			o.(*fyne.Container).Objects[1].(*widget.Label).SetText(r.By)
		})
	in.vers = widget.NewList(func() int { return len(in.verRows) },
		func() fyne.CanvasObject { l := widget.NewLabel(""); l.TextStyle.Monospace = true; return l },
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(in.verRows[i]) })
	in.tasks = widget.NewList(func() int { return len(in.taskRows) },
		func() fyne.CanvasObject {
			head := widget.NewLabel("task")
			head.TextStyle.Bold = true
			head.Truncation = fyne.TextTruncateEllipsis
			detail := widget.NewLabel("detail")
			detail.SizeName = theme.SizeNameCaptionText
			detail.Truncation = fyne.TextTruncateEllipsis
			return container.New(&tightVBox{}, head, detail)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(in.taskRows[i][0])
			box.Objects[1].(*widget.Label).SetText(in.taskRows[i][1])
		})
	in.tabs = container.NewAppTabs(
		container.NewTabItem("State", in.tree),
		container.NewTabItem("JSON", container.NewScroll(in.json)),
		container.NewTabItem("Diff", in.diff),
		container.NewTabItem("Tasks", in.tasks),
		container.NewTabItem("Versions", in.vers),
	)
	in.forkB = widget.NewButtonWithIcon("Edit & fork…", theme.DocumentCreateIcon(), in.editDialog)
	in.rerunB = widget.NewButtonWithIcon("Re-run from here", theme.MediaReplayIcon(), s.rerunFrom)
	in.forkB.Disable()
	in.rerunB.Disable()
	header := widget.NewLabelWithStyle("Inspector", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	in.title.SizeName = theme.SizeNameCaptionText
	top := container.NewVBox(container.NewBorder(nil, nil, header, container.NewHBox(in.forkB, in.rerunB)), in.title)
	in.obj = container.NewBorder(top, nil, nil, nil, in.tabs)
	return in
}

// show displays a checkpoint's view (nil clears the inspector).
func (in *inspector) show(v *view) {
	in.nodes = map[string]*tnode{}
	in.roots, in.changes, in.verRows, in.taskRows = nil, nil, nil, nil
	in.values = map[string]any{}
	if v == nil {
		in.title.SetText("Start or pick a thread: the state at the selected checkpoint shows here.")
		in.forkB.Disable()
		in.rerunB.Disable()
		in.tree.Refresh()
		in.diff.Refresh()
		in.vers.Refresh()
		in.tasks.Refresh()
		in.showJSON()
		return
	}
	in.forkB.Enable()
	in.rerunB.Enable()
	snap := v.Snap
	md := snap.Metadata
	what := joinNames(md.Tasks)
	if what == "" {
		what = string(md.Source)
	}
	title := fmt.Sprintf("Step %d · %s · %s · %s", md.Step, md.Source, what, clock(snap.CreatedAt))
	if !snap.Done() {
		title += " · next " + joinNames(taskNames(snap))
	} else {
		title += " · end"
	}
	in.title.SetText(title)

	_, _, chans, _ := in.s.sess.graphInfo()
	var parentVals map[string]any
	if v.Parent != nil {
		parentVals = map[string]any{}
		for k, x := range v.Parent.Values {
			parentVals[k] = toJSON(x)
		}
	}
	writers := writersOf(v)
	kinds := map[string]string{}
	for _, ch := range chans {
		kinds[ch.Name] = reducerName(ch)
	}
	changedPaths := map[string]bool{}
	for _, ch := range chans {
		val, has := snap.Values[ch.Name]
		var j any
		if has {
			j = toJSON(val)
			in.values[ch.Name] = j
		}
		if parentVals != nil {
			old, had := parentVals[ch.Name]
			var cs []change
			switch {
			case has && !had:
				cs = []change{{ch.Name, "added", nil, j}}
			case !has && had:
				cs = []change{{ch.Name, "removed", old, nil}}
			case has && had:
				diffJSON(ch.Name, old, j, &cs)
			}
			for _, c := range cs {
				by := writers[ch.Name]
				if by == "" {
					by = "written"
				}
				in.changes = append(in.changes, diffRow{Channel: ch.Name, change: c, By: by + " via " + kinds[ch.Name]})
				changedPaths[c.Path] = true
			}
		}
		in.roots = append(in.roots, ch.Name)
		in.addNode(ch.Name, ch.Name, ch.Name, j, has, changedPaths)
	}
	in.verRows = versionRows(snap, chans)
	in.taskRows = taskRows(snap)
	in.tasks.Refresh()
	in.tree.Refresh()
	in.diff.Refresh()
	in.vers.Refresh()
	in.showJSON()
}

// addNode adds the tree node id for JSON data j; path is its diff path.
func (in *inspector) addNode(id, key, path string, j any, has bool, changed map[string]bool) {
	n := &tnode{key: key}
	in.nodes[id] = n
	for p := range changed {
		if p == path || strings.HasPrefix(p, path+".") || strings.HasPrefix(p, path+"[") {
			n.changed = true
			break
		}
	}
	if !has || j == nil {
		n.value = "(empty)"
		return
	}
	n.value = preview(j, 80)
	switch x := j.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cid := id + sep + k
			n.children = append(n.children, cid)
			in.addNode(cid, k, joinPath(path, k), x[k], true, changed)
		}
	case []any:
		for i, e := range x {
			cid := id + sep + strconv.Itoa(i)
			n.children = append(n.children, cid)
			in.addNode(cid, strconv.Itoa(i), path+"["+strconv.Itoa(i)+"]", e, true, changed)
		}
	}
}

// showJSON shows the selected channel's value, or the whole state.
func (in *inspector) showJSON() {
	var text string
	switch {
	case in.selCh != "" && in.values != nil:
		if v, ok := in.values[in.selCh]; ok {
			text = in.selCh + " =\n" + prettyJSON(v)
		} else {
			text = in.selCh + " is empty"
		}
	case len(in.values) > 0:
		text = prettyJSON(in.values)
	default:
		text = ""
	}
	in.json.Segments = []widget.RichTextSegment{&widget.TextSegment{Style: widget.RichTextStyleCodeBlock, Text: text}}
	in.json.Refresh()
}

// writersOf says, per channel, which tasks' writes produced the view's
// checkpoint: the parent's task results, or the update's as-node.
func writersOf(v *view) map[string]string {
	out := map[string]string{}
	md := v.Snap.Metadata
	switch md.Source {
	case "input":
		for k := range v.Snap.Values {
			out[k] = "input"
		}
		return out
	case "update":
		for k := range v.Snap.Values {
			out[k] = "update as " + joinNames(md.Tasks)
		}
		return out
	}
	if v.Parent == nil {
		return out
	}
	byCh := map[string][]string{}
	for _, t := range v.Parent.Tasks {
		for _, w := range t.Result {
			byCh[w.Channel] = append(byCh[w.Channel], t.Name)
		}
	}
	for ch, names := range byCh {
		out[ch] = joinNames(names)
	}
	return out
}

func reducerName(ch engine.ChannelInfo) string {
	if ch.Reducer != "" {
		return ch.Reducer
	}
	return strings.ReplaceAll(ch.Kind, "_", " ")
}

// versionRows lists channel versions: state channels first, then internal.
func versionRows(snap *engine.Snapshot, chans []engine.ChannelInfo) []string {
	var rows []string
	seen := map[string]bool{}
	for _, ch := range chans {
		seen[ch.Name] = true
		if v, ok := snap.Versions[ch.Name]; ok {
			rows = append(rows, fmt.Sprintf("%-14s step %d", ch.Name, engine.VersionStep(v)))
		} else {
			rows = append(rows, fmt.Sprintf("%-14s never written", ch.Name))
		}
	}
	var internal []string
	for k := range snap.Versions {
		if !seen[k] {
			internal = append(internal, k)
		}
	}
	slices.Sort(internal)
	for _, k := range internal {
		rows = append(rows, fmt.Sprintf("%-14s step %d (internal)", k, engine.VersionStep(snap.Versions[k])))
	}
	return rows
}

// taskRows describes the tasks planned from a checkpoint: what each is,
// and whether it finished, failed or waits for an answer.
func taskRows(snap *engine.Snapshot) [][2]string {
	if len(snap.Tasks) == 0 {
		return [][2]string{{"No tasks", "the graph ends at this checkpoint"}}
	}
	var rows [][2]string
	for _, t := range snap.Tasks {
		kind := "pull"
		if strings.HasPrefix(t.Path, "push") {
			kind = "push (Send)"
		}
		state, detail := "next", "reads the state shown in State"
		if t.Input != nil {
			detail = "input " + preview(toJSON(t.Input), 100)
		}
		switch {
		case t.Error != "":
			state, detail = "failed", oneLine(t.Error, 160)
		case len(t.Interrupts) > 0:
			q, _, _ := splitPayload(t.Interrupts[0].Value)
			state, detail = "waiting for an answer", q
		case len(t.Result) > 0:
			var names []string
			for _, w := range t.Result {
				names = append(names, w.Channel)
			}
			state = "finished, wrote " + joinNames(names)
		}
		name := t.Name
		if name == "__start__" {
			name = "start"
		}
		rows = append(rows, [2]string{fmt.Sprintf("%s · %s · %s", name, kind, state), detail})
	}
	return rows
}

func taskNames(snap *engine.Snapshot) []string {
	var out []string
	for _, t := range snap.Tasks {
		out = append(out, t.Name)
	}
	if len(out) == 0 {
		return snap.Next
	}
	return out
}

// forkForm is the edit-and-fork dialog.
type forkForm struct {
	dlg    dialog.Dialog
	ch     *widget.Select
	asNode *widget.Select
	editor *widget.Entry
	errLbl *widget.Label
	forkB  *widget.Button
	// forkRunB forks and runs the new branch to its next stop.
	forkRunB *widget.Button
}

const inferAs = "(infer from the checkpoint)"

// editDialog opens the JSON editor for a channel of the selected checkpoint;
// Fork writes it as a new branch.
func (in *inspector) editDialog() {
	s := in.s
	v := s.view
	if v == nil {
		return
	}
	_, nodes, chans, _ := s.sess.graphInfo()
	f := &forkForm{}
	var names []string
	for _, ch := range chans {
		names = append(names, ch.Name)
	}
	f.editor = widget.NewMultiLineEntry()
	f.editor.TextStyle.Monospace = true
	f.editor.SetMinRowsVisible(10)
	f.errLbl = widget.NewLabel("")
	f.errLbl.Importance = widget.DangerImportance
	f.errLbl.Wrapping = fyne.TextWrapWord
	validate := func() bool {
		if f.ch.Selected == "" {
			f.errLbl.SetText("choose a channel")
			return false
		}
		if !json.Valid([]byte(f.editor.Text)) {
			f.errLbl.SetText("not valid JSON")
			return false
		}
		if _, err := s.sess.replaceWrite(f.ch.Selected, []byte(f.editor.Text)); err != nil {
			f.errLbl.SetText(err.Error())
			return false
		}
		f.errLbl.SetText("")
		return true
	}
	f.ch = widget.NewSelect(names, func(name string) {
		if val, ok := in.values[name]; ok {
			f.editor.SetText(prettyJSON(val))
		} else {
			f.editor.SetText("null")
		}
		validate()
	})
	f.editor.OnChanged = func(string) {
		if validate() {
			f.forkB.Enable()
			f.forkRunB.Enable()
		} else {
			f.forkB.Disable()
			f.forkRunB.Disable()
		}
	}
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
		s.forkAt(f.ch.Selected, []byte(f.editor.Text), as, func(err error) {
			if err != nil {
				f.errLbl.SetText(explain(err).Error())
				f.forkB.Enable()
				f.forkRunB.Enable()
				return
			}
			f.dlg.Hide()
			if run {
				s.runAfterFork = true
			}
		})
	}
	f.forkB = widget.NewButtonWithIcon("Fork", theme.ContentCopyIcon(), func() { doFork(false) })
	f.forkRunB = widget.NewButtonWithIcon("Fork and run", theme.MediaPlayIcon(), func() { doFork(true) })
	f.forkB.Importance = widget.HighImportance
	sel := in.selCh
	if sel == "" && len(names) > 0 {
		sel = names[0]
	}
	f.ch.SetSelected(sel)
	help := widget.NewLabel("The new value replaces the channel's value (reducers are skipped) in a new checkpoint after this one, written as if the chosen node returned it. The old branch stays in the timeline. Fork and run continues the new branch at once; after Fork alone, Run or Step does.")
	help.Wrapping = fyne.TextWrapWord
	form := widget.NewForm(widget.NewFormItem("Channel", f.ch), widget.NewFormItem("As node", f.asNode))
	cancel := widget.NewButton("Cancel", func() { f.dlg.Hide() })
	content := container.NewBorder(container.NewVBox(help, form), container.NewVBox(f.errLbl, container.NewHBox(layoutSpacer(), cancel, f.forkB, f.forkRunB)), nil, nil, f.editor)
	f.dlg = dialog.NewCustomWithoutButtons(fmt.Sprintf("Edit state at step %d and fork", v.Snap.Metadata.Step), content, s.win)
	f.dlg.Resize(fyne.NewSize(600, 480))
	s.forkDlg = f
	f.dlg.Show()
}

func uniq(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
