package studio

// The long-term store's window (View → Long-term store…): the graph's
// store (engine.WithStore), which outlives threads: its namespaces, the
// items of the one picked with when they were written and when they
// expire, the selected item's value, which task of which run wrote it and
// its changes, a filter on values, and the items as they were at the
// checkpoint selected in the main window. It is read off the UI goroutine
// when the window opens, after each step the studio shows, and on Refresh.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/weftstudio/weft/checkpoint/longterm"
)

// storeListLimit bounds the items one namespace shows: a store of a
// million items must not stall the window.
const storeListLimit = 500

// storeChanges is how many changes of the selected item the panel lists.
const storeChanges = 20

// storeRead is what one read of the store found.
type storeRead struct {
	namespaces []longterm.Namespace
	ns         longterm.Namespace // the namespace whose items are listed
	items      []longterm.Item
	// at is the moment the items are as of; nil for now.
	at *moment
	// unknown, when not "", says why the items at at cannot be known.
	unknown string
}

// moment is a checkpoint the store can be seen as at: its time and how
// the panel names it.
type moment struct {
	t     time.Time
	label string // "step 3 of thread t-1"
}

// storeHooks are what the panel asks of the studio.
type storeHooks struct {
	// load runs work off the UI goroutine and apply on it (the studio's
	// background work).
	load func(work func() (storeRead, error), apply func(storeRead, error))
	// changes is load for an item's changes.
	changes func(work func() ([]longterm.Change, error), apply func([]longterm.Change, error))
	// selected returns the checkpoint selected in the main window; false
	// when none is.
	selected func() (moment, bool)
	// goTo shows the step of w's task in the main window; "" when it
	// did, else why it could not.
	goTo func(w longterm.Writer) string
}

// storePanel shows a long-term store. Its reads go through the hooks'
// load; lt nil shows why there is nothing.
type storePanel struct {
	widget.BaseWidget
	hooks storeHooks

	lt      longterm.Store
	why     string // shown when lt is nil
	read    storeRead
	filter  longterm.Filter
	query   string            // text the items are ranked by, "" for none
	sel     int               // the selected item, -1 for none
	changes []longterm.Change // the selected item's, newest first
	chFor   [2]string         // the namespace and key changes are of
	chGen   int               // counts reads of changes: a late one is dropped

	status  *widget.Label
	filterE *widget.Entry
	queryE  *widget.Entry // search by meaning
	refresh *widget.Button
	asAt    *widget.Check  // the items as at the selected checkpoint
	nsPick  *widget.Select // the namespaces
	itList  *widget.List
	value   *widget.Label
	facts   *widget.Label
	writer  *widget.Label  // who wrote the item
	goStep  *widget.Button // shows the step that wrote it
	history *widget.Label  // the item's changes
	body    fyne.CanvasObject
	empty   *widget.Label
}

func newStorePanel(hooks storeHooks) *storePanel {
	p := &storePanel{hooks: hooks, sel: -1}
	p.status = mutedLabel("")
	p.filterE = widget.NewEntry()
	p.filterE.SetPlaceHolder(`filter on values, as JSON (Enter): {"preference": "I prefer euros"}`)
	p.filterE.OnSubmitted = func(string) { p.applyFilter() }
	p.queryE = widget.NewEntry()
	p.queryE.SetPlaceHolder("search by meaning (Enter), ranked by the store's embedder: what drink does the user like")
	p.queryE.OnSubmitted = func(text string) {
		p.query = strings.TrimSpace(text)
		p.reload(p.read.ns)
	}
	p.refresh = widget.NewButtonWithIcon("Refresh", theme.ViewRefreshIcon(), func() { p.reload(p.read.ns) })
	p.nsPick = widget.NewSelect(nil, func(name string) {
		if name != p.read.ns.String() {
			p.reload(longterm.ParseNamespace(name))
		}
	})
	p.nsPick.PlaceHolder = "(no namespaces)"
	p.itList = widget.NewList(func() int { return len(p.read.items) },
		func() fyne.CanvasObject { return widget.NewLabel("key · updated") },
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(itemRow(p.read.items[i])) })
	p.itList.OnSelected = func(i widget.ListItemID) { p.sel = i; p.showItem() }
	p.value = widget.NewLabel("")
	p.value.Wrapping = fyne.TextWrapWord
	p.value.TextStyle.Monospace = true
	p.facts = mutedLabel("")
	p.writer = widget.NewLabel("")
	p.writer.Wrapping = fyne.TextWrapWord
	p.goStep = widget.NewButtonWithIcon("Show that step", theme.NavigateNextIcon(), p.showStep)
	p.goStep.Hide()
	p.history = mutedLabel("")
	p.history.Wrapping = fyne.TextWrapWord
	p.asAt = widget.NewCheck("As at the selected checkpoint", func(bool) { p.reload(p.read.ns) })
	p.empty = placeholder("")
	p.status.SizeName = theme.SizeNameCaptionText
	// The namespace picker gets room for a namespace of three labels.
	pick := container.NewGridWrap(fyne.NewSize(300, p.nsPick.MinSize().Height), p.nsPick)
	top := container.NewBorder(nil, nil, pick, p.refresh, p.filterE)
	detail := container.NewVScroll(container.NewVBox(p.facts, container.NewBorder(nil, nil, nil, p.goStep, p.writer), p.value, p.history))
	split := container.NewHSplit(p.itList, detail)
	split.Offset = 0.45
	p.body = container.NewBorder(container.NewVBox(top, p.queryE, container.NewBorder(nil, nil, nil, p.asAt, p.status)), nil, nil, nil, split)
	p.ExtendBaseWidget(p)
	p.setStore(nil, "No graph is open.")
	return p
}

// CreateRenderer is part of fyne.Widget.
func (p *storePanel) CreateRenderer() fyne.WidgetRenderer {
	return widget.NewSimpleRenderer(container.NewStack(p.empty, p.body))
}

// setStore shows lt (why says why there is none when it is nil) and reads
// it again.
func (p *storePanel) setStore(lt longterm.Store, why string) {
	p.lt, p.why = lt, why
	p.read, p.sel, p.changes, p.chFor = storeRead{}, -1, nil, [2]string{}
	_, hasHistory := lt.(longterm.History)
	if hasHistory {
		p.asAt.Enable()
	} else {
		p.asAt.SetChecked(false)
		p.asAt.Disable() // this store keeps no history of its items
	}
	p.nsPick.SetOptions(nil)
	p.itList.UnselectAll()
	if lt == nil {
		p.empty.SetText(why)
		p.empty.Show()
		p.body.Hide()
		return
	}
	p.empty.Hide()
	p.body.Show()
	p.reload(nil)
}

// applyFilter reads the entry's filter and lists again with it; a filter
// that is not a JSON object is refused, saying so.
func (p *storePanel) applyFilter() {
	text := strings.TrimSpace(p.filterE.Text)
	p.filter = nil
	if text != "" {
		var f longterm.Filter
		if err := json.Unmarshal([]byte(text), &f); err != nil {
			p.status.SetText("The filter is not a JSON object of values to match: " + err.Error())
			return
		}
		p.filter = f
	}
	p.reload(p.read.ns)
}

// reload reads the namespaces and the items of ns (the first namespace
// when ns is nil) off the UI goroutine: as they are now, or as they were
// at the selected checkpoint when As at is checked.
func (p *storePanel) reload(ns longterm.Namespace) {
	lt, filter, query := p.lt, p.filter, p.query
	if lt == nil {
		return
	}
	var at *moment
	if p.asAt.Checked {
		m, ok := p.hooks.selected()
		if !ok {
			p.status.SetText("Select a checkpoint in the main window to see the store as it was then.")
			return
		}
		at = &m
	}
	p.status.SetText("Reading the store…")
	p.hooks.load(func() (storeRead, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if at != nil {
			if query != "" {
				return storeRead{}, errors.New("a search by meaning reads the store as it is now: the embeddings of past values are not kept (clear the search or As at)")
			}
			return readStoreAt(ctx, lt.(longterm.History), ns, filter, *at)
		}
		spaces, err := lt.ListNamespaces(ctx, longterm.NamespaceQuery{Limit: storeListLimit})
		if err != nil {
			return storeRead{}, err
		}
		r := storeRead{namespaces: spaces, ns: ns}
		if r.ns == nil && len(spaces) > 0 {
			r.ns = spaces[0]
		}
		if r.ns != nil {
			// NoRefresh: looking at an item must not keep it alive.
			r.items, err = lt.Search(ctx, longterm.SearchQuery{Prefix: r.ns, Filter: filter, Query: query, Limit: storeListLimit, NoRefresh: true})
			if errors.Is(err, longterm.ErrNoEmbedder) {
				err = errors.New("this store has no embedder to search by meaning: open it with examples/live and WEFT_EMBEDDINGS set (plain weft links no model SDK); the filter above searches by value")
			}
		}
		return r, err
	}, func(r storeRead, err error) {
		if lt != p.lt {
			return // another store since
		}
		if err != nil {
			p.status.SetText("Reading the store: " + err.Error())
			return
		}
		if r.unknown != "" {
			p.read, p.sel = r, -1
			p.nsPick.SetOptions(nil)
			p.itList.UnselectAll()
			p.itList.Refresh()
			p.status.SetText(r.unknown)
			p.showItem()
			return
		}
		keep := ""
		if p.sel >= 0 && p.sel < len(p.read.items) {
			keep = p.read.items[p.sel].Key
		}
		p.read, p.sel = r, -1
		names := make([]string, len(r.namespaces))
		for i, ns := range r.namespaces {
			names[i] = ns.String()
		}
		p.nsPick.SetOptions(names)
		p.nsPick.SetSelected(r.ns.String()) // its callback sees the same namespace and reads nothing
		p.itList.UnselectAll()
		p.itList.Refresh()
		for i, it := range r.items {
			if it.Key == keep {
				p.sel = i
			}
		}
		if p.sel < 0 && len(r.items) > 0 {
			p.sel = 0
		}
		if p.sel >= 0 {
			p.itList.Select(p.sel)
		}
		p.status.SetText(p.summary())
		p.showItem()
	})
}

// readStoreAt reads the namespaces and the items of ns (the first when
// nil) as they were at m, from the store's history. The namespaces are
// those of the newest storeListLimit items then.
func readStoreAt(ctx context.Context, h longterm.History, ns longterm.Namespace, filter longterm.Filter, m moment) (storeRead, error) {
	r := storeRead{at: &m, ns: ns}
	all, err := longterm.SearchAt(ctx, h, longterm.SearchQuery{Limit: storeListLimit}, m.t)
	var before *longterm.BeforeHistoryError
	if errors.As(err, &before) {
		r.unknown = fmt.Sprintf("The store's items at %s (%s) cannot be known: it was made by an older Weft and keeps their history since %s.",
			m.label, m.t.Local().Format(time.DateTime), before.Began.Local().Format(time.DateTime))
		return r, nil
	}
	if err != nil {
		return r, err
	}
	seen := map[string]bool{}
	for _, it := range all {
		if k := it.Namespace.String(); !seen[k] {
			seen[k] = true
			r.namespaces = append(r.namespaces, it.Namespace)
		}
	}
	slices.SortFunc(r.namespaces, func(a, b longterm.Namespace) int { return strings.Compare(a.String(), b.String()) })
	if r.ns == nil && len(r.namespaces) > 0 {
		r.ns = r.namespaces[0]
	}
	if r.ns != nil {
		r.items, err = longterm.SearchAt(ctx, h, longterm.SearchQuery{Prefix: r.ns, Filter: filter, Limit: storeListLimit}, m.t)
	}
	return r, err
}

// summary says what the panel lists.
func (p *storePanel) summary() string {
	r := p.read
	when := ""
	if r.at != nil {
		when = " as at " + r.at.label
	}
	if len(r.namespaces) == 0 {
		if r.at != nil {
			return "No items" + when + "."
		}
		return "No items yet: a node puts them through engine.RuntimeOf(ctx).Store, and they stay across threads."
	}
	s := fmt.Sprintf("%s · %s in %s%s", plural(len(r.namespaces), "namespace"), plural(len(r.items), "item"), r.ns, when)
	if len(r.items) == storeListLimit {
		s += fmt.Sprintf(" (the newest %d)", storeListLimit)
	}
	if p.filter != nil {
		s += " matching the filter"
	}
	if p.query != "" && r.at == nil {
		s += ", most alike first"
	}
	return s
}

// showItem shows the selected item's value, facts, writer and changes
// (read off the UI goroutine).
func (p *storePanel) showItem() {
	if p.sel < 0 || p.sel >= len(p.read.items) {
		p.facts.SetText("")
		p.value.SetText("")
		p.writer.SetText("")
		p.goStep.Hide()
		p.history.SetText("")
		return
	}
	it := p.read.items[p.sel]
	facts := []string{it.Namespace.String() + " · " + it.Key}
	if !it.CreatedAt.IsZero() { // a past item's creation is not recorded
		facts = append(facts, "created "+it.CreatedAt.Local().Format(time.DateTime))
	}
	facts = append(facts, "updated "+it.UpdatedAt.Local().Format(time.DateTime))
	if it.TTL > 0 {
		facts = append(facts, fmt.Sprintf("expires %s unless read (TTL %v)", it.ExpiresAt.Local().Format(time.DateTime), it.TTL))
	} else {
		facts = append(facts, "never expires")
	}
	p.facts.SetText(strings.Join(facts, "\n"))
	p.writer.SetText(storeWriterText(it.Writer))
	if it.Writer.IsZero() || it.Writer.ThreadID == "" {
		p.goStep.Hide()
	} else {
		p.goStep.Show()
	}
	b, err := json.MarshalIndent(it.Value, "", "  ")
	if err != nil {
		p.value.SetText("The value cannot be shown: " + err.Error())
	} else {
		p.value.SetText(oneLineCap(string(b)))
	}
	p.loadChanges(it)
}

// loadChanges reads the changes of it (up to the moment shown) and lists
// them under its value.
func (p *storePanel) loadChanges(it longterm.Item) {
	h, ok := p.lt.(longterm.History)
	if !ok {
		p.history.SetText("")
		return
	}
	key := [2]string{it.Namespace.String(), it.Key}
	if key != p.chFor {
		p.history.SetText("Reading its changes…")
	}
	p.chGen++
	gen, lt := p.chGen, p.lt
	q := longterm.ChangeQuery{Prefix: it.Namespace, Key: it.Key, Limit: storeChanges}
	if p.read.at != nil {
		q.Until = p.read.at.t
	}
	p.hooks.changes(func() ([]longterm.Change, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return h.Changes(ctx, q)
	}, func(cs []longterm.Change, err error) {
		if gen != p.chGen || lt != p.lt {
			return // another item or store since
		}
		p.changes, p.chFor = cs, key
		if err != nil {
			p.history.SetText("Its changes cannot be read: " + err.Error())
			return
		}
		p.history.SetText(changesText(cs))
	})
}

// changesText lists an item's changes, newest first.
func changesText(cs []longterm.Change) string {
	if len(cs) == 0 {
		return ""
	}
	lines := []string{fmt.Sprintf("Changes, newest first (each item keeps its last %d):", longterm.HistoryPerItem)}
	for _, c := range cs {
		what := "put"
		if c.Deleted() {
			what = "deleted"
		}
		lines = append(lines, fmt.Sprintf("%s · %s %s", c.At.Local().Format("Jan 2 15:04:05.000"), what, writerPhrase(c.Writer)))
	}
	if len(cs) == storeChanges {
		lines = append(lines, fmt.Sprintf("(the newest %d shown)", storeChanges))
	}
	return strings.Join(lines, "\n")
}

// storeWriterText says who wrote an item, as a sentence.
func storeWriterText(w longterm.Writer) string {
	return "Written " + writerPhrase(w) + "."
}

// writerPhrase says who made a change: "by node remember (task 1a2b3c4d)
// at step 3 of thread t-1", or outside a run.
func writerPhrase(w longterm.Writer) string {
	if w.IsZero() {
		return "outside a run (a command, the API or a program's own code)"
	}
	s := fmt.Sprintf("by node %s (task %s) at step %d", w.Node, shortID(w.TaskID), w.Step)
	if w.NS != "" {
		s += " of a subgraph"
	}
	if w.ThreadID != "" {
		s += " of thread " + w.ThreadID
	}
	return s
}

// showStep shows the step that wrote the selected item in the main
// window, or says why it cannot.
func (p *storePanel) showStep() {
	if p.sel < 0 || p.sel >= len(p.read.items) {
		return
	}
	if why := p.hooks.goTo(p.read.items[p.sel].Writer); why != "" {
		p.status.SetText(why)
	}
}

// oneLineCap cuts a value's text to what a label draws quickly.
func oneLineCap(s string) string {
	const most = 16 << 10
	if len(s) <= most {
		return s
	}
	return s[:most] + fmt.Sprintf("\n… cut: %s of %s shown", byteSize(most), byteSize(len(s)))
}

// itemRow is an item's line in the list: key, when it was updated, and
// its expiry.
func itemRow(it longterm.Item) string {
	row := it.Key
	if it.Score != nil {
		row += fmt.Sprintf(" · %.2f alike", *it.Score)
	}
	row += " · updated " + it.UpdatedAt.Local().Format("Jan 2 15:04:05")
	if it.TTL > 0 {
		row += " · expires " + it.ExpiresAt.Local().Format("Jan 2 15:04")
	}
	return row
}
