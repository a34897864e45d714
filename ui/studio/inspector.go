package studio

import (
	"fmt"
	"image/color"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint/langgraph"
	"github.com/weftstudio/weft/engine"
)

// inspector is the right column: the channels of the selected checkpoint as
// a tree (changed ones marked), a conversation view of a Messages channel,
// the diff against the parent checkpoint with who wrote each change, the
// planned tasks, a JSON view and channel versions. It shows the model's
// selected view and empties itself when the thread or graph changes.
type inspector struct {
	m *model
	a *actions
	composite
	title    *widget.Label
	tree     *keyTree
	stateBox *fyne.Container // the State tab: the tree, at least minRows tall
	chat     *chatView
	calls    *callsView
	json     *textViewer
	diff     *keyList
	vers     *keyList
	tasks    *keyList
	tabs     *container.AppTabs
	chatTab  *container.TabItem
	callsTab *container.TabItem
	forkB    *keyButton
	rerunB   *keyButton
	whatIfB  *keyButton
	nodes    map[string]*tnode
	roots    []string
	values   map[string]any // channel → JSON data
	changes  []diffRow
	verRows  [][2]string
	taskRows [][2]string
	selCh    string
	shown    *view
	stale    map[*container.TabItem]bool // tabs whose content waits for them to be opened
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
	By    string // "research ×3 via append"
	shown string // text(), worked out once: values may be megabytes
}

const sep = "\x1f"

const noStateHint = "Start or pick a thread: the state at the selected checkpoint shows here."

func newInspector(m *model, a *actions) *inspector {
	in := &inspector{m: m, a: a, nodes: map[string]*tnode{}, stale: map[*container.TabItem]bool{}}
	in.title = widget.NewLabel(noStateHint)
	in.title.Wrapping = fyne.TextWrapWord
	in.title.SizeName = theme.SizeNameCaptionText
	in.tree = newKeyTree(a.key)
	in.tree.ChildUIDs = func(id widget.TreeNodeID) []widget.TreeNodeID {
		if id == "" {
			return in.roots
		}
		if n := in.nodes[id]; n != nil {
			return n.children
		}
		return nil
	}
	in.tree.IsBranch = func(id widget.TreeNodeID) bool {
		if id == "" {
			return true
		}
		n := in.nodes[id]
		return n != nil && len(n.children) > 0
	}
	in.tree.CreateNode = func(bool) fyne.CanvasObject {
		key := widget.NewLabel("key")
		key.TextStyle.Bold = true
		val := widget.NewLabel("value")
		val.Truncation = fyne.TextTruncateEllipsis
		mark := widget.NewLabel("changed")
		mark.Importance = widget.WarningImportance
		mark.SizeName = theme.SizeNameCaptionText
		return container.NewBorder(nil, nil, key, mark, val)
	}
	in.tree.UpdateNode = func(id widget.TreeNodeID, _ bool, o fyne.CanvasObject) {
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
		// A reused row keeps the last node's key width otherwise.
		c.Layout.Layout(c.Objects, c.Size())
	}
	in.tree.OnSelected = func(id widget.TreeNodeID) {
		ch, _, _ := strings.Cut(id, sep)
		if strings.HasPrefix(ch, "\x1esub:") {
			return // a subgraph's state: not one of the graph's channels
		}
		in.selCh = ch
		in.markStale(in.tabs.Items[in.tabIndex("JSON")])
	}
	// The tabs ask for minRows rows of state whatever the bottom tabs
	// hold, so that nothing they show pushes the divider over the state
	// (frame.arrange).
	floor := canvas.NewRectangle(color.Transparent)
	floor.SetMinSize(fyne.NewSize(0, minRows*stateRowH()))
	in.stateBox = container.NewStack(floor, in.tree)
	in.json = newTextViewer("State")
	in.diff = newKeyList(a.key, func() int { return len(in.changes) },
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
			if i >= len(in.changes) {
				return
			}
			r := in.changes[i]
			top := o.(*fyne.Container).Objects[0].(*fyne.Container)
			left := top.Objects[1].(*fyne.Container)
			kind := left.Objects[0].(*widget.Label)
			kind.Text = map[string]string{"added": "+", "removed": "−", "changed": "~"}[r.Kind]
			kind.Importance = map[string]widget.Importance{"added": widget.SuccessImportance, "removed": widget.DangerImportance, "changed": widget.WarningImportance}[r.Kind]
			kind.Refresh()
			left.Objects[1].(*widget.Label).SetText(r.Path)
			top.Objects[0].(*widget.Label).SetText(r.shown)
			o.(*fyne.Container).Objects[1].(*widget.Label).SetText(r.By)
		})
	in.vers = newKeyList(a.key, func() int { return len(in.verRows) },
		func() fyne.CanvasObject {
			name := widget.NewLabel("")
			name.TextStyle.Monospace = true
			return container.NewBorder(nil, nil, name, nil, widget.NewLabel(""))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(in.verRows) {
				return
			}
			c := o.(*fyne.Container)
			c.Objects[1].(*widget.Label).SetText(in.verRows[i][0])
			c.Objects[0].(*widget.Label).SetText(in.verRows[i][1])
		})
	in.tasks = newKeyList(a.key, func() int { return len(in.taskRows) },
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
			if i >= len(in.taskRows) {
				return
			}
			box := o.(*fyne.Container)
			box.Objects[0].(*widget.Label).SetText(in.taskRows[i][0])
			box.Objects[1].(*widget.Label).SetText(in.taskRows[i][1])
		})
	in.chat = newChatView()
	in.chatTab = container.NewTabItem("Chat", in.chat)
	in.calls = newCallsView(a.key)
	in.callsTab = container.NewTabItem("Calls", in.calls)
	in.tabs = container.NewAppTabs()
	in.tabs.OnSelected = func(ti *container.TabItem) {
		if c := fyne.CurrentApp().Driver().CanvasForObject(in); c != nil {
			unfocusHidden(c, in.tabs)
		}
		if in.stale[ti] {
			in.refreshTab(ti)
		}
	}
	in.whatIfB = newKeyButton(a.key, "What if… drop or replace these writes", theme.ViewRefreshIcon(), func() {
		if a.dbg != nil {
			call(a.dbg.whatIf)
		}
	})
	in.whatIfB.Importance = widget.LowImportance
	in.setTabs()
	in.forkB = newKeyButton(a.key, "Edit & fork…", theme.DocumentCreateIcon(), func() { call(a.editFork) })
	in.rerunB = newKeyButton(a.key, "Re-run from here", theme.MediaReplayIcon(), func() { call(a.rerun) })
	in.forkB.Disable()
	in.rerunB.Disable()
	in.whatIfB.Disable()
	header := widget.NewLabelWithStyle("Inspector", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	// The title wraps: a long one (an error, many next tasks) scrolls in
	// three lines rather than pushing the tree away and the window taller.
	top := container.NewVBox(container.NewBorder(nil, nil, header, container.NewHBox(in.forkB, in.rerunB)), capped(in.title, 3*titleLine()))
	in.compose(in, container.NewBorder(top, nil, nil, nil, in.tabs))
	m.subscribe(chGraph|chThread|chView|chRun|chEvents, func(c part) {
		if c&chGraph != 0 {
			in.setTabs()
		}
		if c&(chGraph|chThread) != 0 {
			in.selCh = ""
			in.tree.UnselectAll()
		}
		if c&(chGraph|chThread|chView) != 0 {
			in.show(m.scope().shown())
		}
		if c&(chRun|chView|chThread) != 0 {
			in.setButtons()
		}
		if c&(chEvents|chRun) != 0 && in.chatTab != nil {
			in.markStale(in.chatTab) // tokens stream into the chat
		}
		if c&(chEvents|chRun) != 0 {
			in.markStale(in.callsTab) // calls stream in
		}
	})
	return in
}

// setTabs offers the tabs the selected graph can fill: Chat only when it
// has a Messages channel.
func (in *inspector) setTabs() {
	items := []*container.TabItem{container.NewTabItem("State", in.stateBox)}
	if in.chatKey() != "" {
		items = append(items, in.chatTab)
	}
	items = append(items, in.callsTab,
		container.NewTabItem("Diff", in.diff),
		container.NewTabItem("Tasks", container.NewBorder(container.NewHBox(in.whatIfB), nil, nil, nil, in.tasks)),
		container.NewTabItem("JSON", in.json),
		container.NewTabItem("Versions", in.vers),
	)
	in.tabs.SetItems(items)
	in.stale = map[*container.TabItem]bool{}
}

func (in *inspector) tabIndex(name string) int {
	for i, ti := range in.tabs.Items {
		if ti.Text == name {
			return i
		}
	}
	return 0
}

// setButtons enables Edit & fork and Re-run when a checkpoint is shown and
// no run is going.
func (in *inspector) setButtons() {
	on := in.shown != nil && in.shown.NS == "" && !in.m.run.Busy && !in.m.readOnly()
	for _, b := range []*keyButton{in.forkB, in.rerunB, in.whatIfB} {
		on := on && (b != in.whatIfB || !in.m.isView()) // what-if is the engine's reducers
		if on && b.Disabled() {
			b.Enable()
		} else if !on && !b.Disabled() {
			b.Disable()
		}
	}
}

// markStale refreshes ti now when it is open, otherwise when it opens.
func (in *inspector) markStale(ti *container.TabItem) {
	if in.tabs.Selected() == ti {
		in.refreshTab(ti)
		return
	}
	in.stale[ti] = true
}

// refreshTab redraws one tab's content.
func (in *inspector) refreshTab(ti *container.TabItem) {
	delete(in.stale, ti)
	switch ti.Text {
	case "Chat":
		in.showChat()
	case "Calls":
		in.showCalls()
	case "Diff":
		in.diff.Refresh()
	case "Tasks":
		in.tasks.Refresh()
	case "JSON":
		in.showJSON()
	case "Versions":
		in.vers.Refresh()
	}
}

// show displays a checkpoint's view (nil clears the inspector). Only the
// open tab is redrawn; in the state tree only rows whose text changed are.
func (in *inspector) show(v *view) {
	oldNodes, oldRoots := in.nodes, in.roots
	in.shown = v
	in.nodes = map[string]*tnode{}
	in.roots, in.changes, in.verRows, in.taskRows = nil, nil, nil, nil
	in.values = map[string]any{}
	if v == nil {
		if err := in.m.scope().viewErr; err != nil {
			in.title.SetText("This checkpoint could not be read: " + explain(err).Error())
		} else {
			in.title.SetText(noStateHint)
		}
		in.refreshTree(oldNodes, oldRoots)
		in.setButtons()
		in.staleAll()
		return
	}
	if in.m.isView() && (in.chatKey() != "") != slices.Contains(in.tabs.Items, in.chatTab) {
		in.setTabs() // a view's chat is there when its state holds messages
	}
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
	if g, ok := md.Extra[langgraph.GuessedReducersKey].([]any); ok && len(g) > 0 {
		// The store keeps no reducers: say where the value is a guess.
		var names []string
		for _, x := range g {
			if n, ok := x.(string); ok {
				names = append(names, n)
			}
		}
		title += " · reducer guessed for " + joinNames(names)
	}
	if e := editsText(md); e != "" {
		title += " · " + e
	}
	if v.NS != "" {
		title = "Subgraph " + nsLabel(v.NS) + " · " + title
	}
	if in.title.Text != title {
		in.title.SetText(title)
	}

	chans := in.m.channels()
	if v.NS != "" {
		chans = v.Chans
	}
	chans = withUnknown(chans, snap.Values, v.Parent)
	var parentVals map[string]any
	if v.Parent != nil {
		parentVals = map[string]any{}
		for k, x := range v.Parent.Values {
			parentVals[k] = toJSON(x)
		}
	}
	writers := writersOf(v)
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
				r := diffRow{Channel: ch.Name, change: c, By: by + " via " + reducerName(ch)}
				r.shown = r.text()
				in.changes = append(in.changes, r)
				changedPaths[c.Path] = true
			}
		}
		in.roots = append(in.roots, ch.Name)
		in.addNode(ch.Name, ch.Name, ch.Name, j, has, changedPaths)
	}
	in.addSubgraphStates(snap)
	in.verRows = versionRows(snap, chans)
	in.taskRows = taskRows(snap)
	in.refreshTree(oldNodes, oldRoots)
	in.setButtons()
	in.staleAll()
}

// staleAll marks every tab but State for redrawing (the open one at once).
func (in *inspector) staleAll() {
	for _, ti := range in.tabs.Items {
		if ti.Text != "State" {
			in.markStale(ti)
		}
	}
}

// refreshTree redraws the state tree: only the rows whose key, value or
// mark changed when the rows shown are the same ones, everything when
// rows were added or removed where they show.
func (in *inspector) refreshTree(old map[string]*tnode, oldRoots []string) {
	same := slices.Equal(oldRoots, in.roots)
	var changed []string
	for id, n := range in.nodes {
		o := old[id]
		if o == nil {
			if same && !in.shownRow(id) {
				continue
			}
			same = false
			break
		}
		if in.tree.IsBranchOpen(id) && !slices.Equal(o.children, n.children) {
			same = false
			break
		}
		if o.key != n.key || o.value != n.value || o.changed != n.changed || (len(o.children) > 0) != (len(n.children) > 0) {
			changed = append(changed, id)
		}
	}
	if same {
		for id := range old {
			if in.nodes[id] == nil && in.shownRow(id) {
				same = false
				break
			}
		}
	}
	if !same {
		in.tree.Refresh()
		return
	}
	for _, id := range changed {
		if in.shownRow(id) {
			in.tree.RefreshItem(id)
		}
	}
}

// shownRow reports whether row id can be on screen: a root, or a child of
// open branches all the way up.
func (in *inspector) shownRow(id string) bool {
	for {
		i := strings.LastIndex(id, sep)
		if i < 0 {
			return true
		}
		id = id[:i]
		if !in.tree.IsBranchOpen(id) {
			return false
		}
	}
}

// addSubgraphStates adds, after the channels, a row per subgraph task of
// the checkpoint's step that has a state of its own: its step and what it
// runs next, its channels below (and its own subgraph tasks in turn).
func (in *inspector) addSubgraphStates(snap *engine.Snapshot) {
	in.roots = append(in.roots, in.subgraphRows("", snap)...)
}

// subgraphRows adds the rows of snap's subgraph tasks under tree id
// parent ("" for the root) and returns their ids.
func (in *inspector) subgraphRows(parent string, snap *engine.Snapshot) []string {
	var ids []string
	count := map[string]int{}
	for _, t := range snap.Tasks {
		if t.State == nil {
			continue
		}
		count[t.Name]++
		st := t.State
		id := parent + sep + "\x1esub:" + t.NS
		if parent == "" {
			id = "\x1esub:" + t.NS
		}
		n := &tnode{key: fmt.Sprintf("%s #%d", t.Name, count[t.Name])}
		what := fmt.Sprintf("subgraph · step %d", st.Metadata.Step)
		switch {
		case len(st.Interrupts) > 0:
			what += " · waiting for an answer"
		case st.Done():
			what += " · done"
		default:
			what += " · next " + joinNames(taskNames(st))
		}
		n.value = what
		in.nodes[id] = n
		keys := make([]string, 0, len(st.Values))
		for k := range st.Values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			cid := id + sep + k
			n.children = append(n.children, cid)
			in.addNode(cid, k, "", toJSON(st.Values[k]), true, nil)
		}
		n.children = append(n.children, in.subgraphRows(id, st)...)
		ids = append(ids, id)
	}
	return ids
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
	n.value = preview(j, 120)
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
	in.json.title = "State"
	if in.selCh != "" {
		in.json.title = in.selCh
	}
	in.json.set(text)
}

// showChat shows the Messages channel of the shown checkpoint as a
// conversation, with tokens still streaming at the thread's head.
func (in *inspector) showChat() {
	name := in.chatKey()
	var msgs, before []engine.Message
	if v := in.shown; v != nil && name != "" {
		msgs = messagesIn(v.Snap.Values[name])
		if v.Parent != nil {
			before = messagesIn(v.Parent.Values[name])
		}
	}
	var live []streamMsg
	if sc := in.m.scope(); (in.m.run.Going && sc.thread == in.m.run.Thread) || sc.followed {
		live = sc.stream // the tokens of the run going, the window's or one it follows
	}
	in.chat.set(msgs, before, live)
}

// chatKey is the state key the Chat tab shows: the graph's Messages
// channel, or for a view, which declares no channels, the shown state's
// list of messages (viewMessages); "" for none.
func (in *inspector) chatKey() string {
	if name := messagesChannel(in.m.channels()); name != "" || !in.m.isView() {
		return name
	}
	if v := in.shown; v != nil {
		return viewMessages(v.Snap.Values)
	}
	return ""
}

// viewMessages is the key of a view's state holding a list of messages
// (LangChain's, as a server or a LangGraph store gives them): "messages"
// when it is one, else the first such key by name; "" for none.
func viewMessages(vals engine.Values) string {
	if len(messagesIn(vals["messages"])) > 0 {
		return "messages"
	}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		if len(messagesIn(vals[k])) > 0 {
			return k
		}
	}
	return ""
}

// messagesIn reads v as a list of messages: a Messages channel's value, or
// a list every element of which is message-shaped (engine.MessageOf); nil
// otherwise.
func messagesIn(v any) []engine.Message {
	switch l := v.(type) {
	case []engine.Message:
		return l
	case []any:
		out := make([]engine.Message, 0, len(l))
		for _, x := range l {
			m, ok := engine.MessageOf(x)
			if !ok {
				return nil
			}
			out = append(out, m)
		}
		return out
	}
	return nil
}

// showCalls lists the model and tool calls of the run in progress on this
// thread, then those around the shown checkpoint.
func (in *inspector) showCalls() {
	var groups []callGroup
	if sc := in.m.scope(); in.m.run.Going && sc.thread == in.m.run.Thread {
		groups = liveGroups(sc.calls)
	}
	in.calls.set(append(groups, callGroupsOf(in.shown)...))
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

// withUnknown adds to chans, sorted after them, the keys of values (and
// of the parent's) that no channel declares: a view graph of another
// program's threads declares none, and a value shown nowhere would be a
// value silently hidden. Their kind is "unknown".
func withUnknown(chans []engine.ChannelInfo, values engine.Values, parent *engine.Snapshot) []engine.ChannelInfo {
	known := map[string]bool{}
	for _, ch := range chans {
		known[ch.Name] = true
	}
	var extra []string
	add := func(vs engine.Values) {
		for k := range vs {
			if !known[k] {
				known[k] = true
				extra = append(extra, k)
			}
		}
	}
	add(values)
	if parent != nil {
		add(parent.Values)
	}
	if len(extra) == 0 {
		return chans
	}
	sort.Strings(extra)
	out := slices.Clip(chans)
	for _, k := range extra {
		out = append(out, engine.ChannelInfo{Name: k, Kind: "unknown"})
	}
	return out
}

func reducerName(ch engine.ChannelInfo) string {
	if ch.Reducer != "" {
		return ch.Reducer
	}
	return strings.ReplaceAll(ch.Kind, "_", " ")
}

// versionRows lists channel versions (how many steps wrote each channel):
// state channels first, then internal ones.
func versionRows(snap *engine.Snapshot, chans []engine.ChannelInfo) [][2]string {
	var rows [][2]string
	seen := map[string]bool{}
	for _, ch := range chans {
		seen[ch.Name] = true
		if v, ok := snap.Versions[ch.Name]; ok {
			rows = append(rows, [2]string{ch.Name, fmt.Sprintf("version %d", engine.VersionStep(v))})
		} else {
			rows = append(rows, [2]string{ch.Name, "never written"})
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
		rows = append(rows, [2]string{k, fmt.Sprintf("version %d (internal)", engine.VersionStep(snap.Versions[k]))})
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
		case len(t.Interrupts) > 0 && t.Finished:
			// Asked, answered and finished within this step (LangGraph
			// keeps both the interrupt and the result on the checkpoint).
			var names []string
			for _, w := range t.Result {
				names = append(names, w.Channel)
			}
			q, _, _ := splitPayload(t.Interrupts[0].Value)
			state, detail = "answered, wrote "+joinNames(names), "asked "+oneLine(q, 160)
		case len(t.Interrupts) > 0:
			q, _, _ := splitPayload(t.Interrupts[0].Value)
			state, detail = "waiting for an answer", oneLine(q, 160)
		case len(t.Result) > 0:
			var names []string
			for _, w := range t.Result {
				names = append(names, w.Channel)
			}
			state = "finished, wrote " + joinNames(names)
		}
		if t.State != nil {
			detail += " · its own state shows in State"
		}
		if n := len(t.Calls) + t.CallsDropped; n > 0 {
			detail += " · " + plural(n, "model or tool call") + " in Calls"
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

func uniq(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// titleLine is the height of one line of the inspector's title.
// minRows is how many rows of state the inspector keeps whatever the
// panels below it show. At WindowSize the right column has some 460 px:
// the inspector's header takes 115, four rows 156, which leaves the
// bottom tabs room for a question and its answer buttons.
const minRows = 4

// stateRowH is the height of a row of the state tree: a label and the
// tree's padding between rows.
func stateRowH() float32 {
	return widget.NewLabel("Mg").MinSize().Height + theme.Padding()
}

func titleLine() float32 {
	th := theme.Current()
	return fyne.MeasureText("Mg", th.Size(theme.SizeNameCaptionText), fyne.TextStyle{}).Height + th.Size(theme.SizeNameLineSpacing)
}
