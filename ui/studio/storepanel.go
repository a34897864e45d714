package studio

// The long-term store's window (View → Long-term store…): the graph's
// store (engine.WithStore), which outlives threads: its namespaces, the
// items of the one picked with when they were written and when they
// expire, the selected item's value, and a filter on values. It is read
// off the UI goroutine when the window opens, after each step the studio
// shows, and on Refresh.

import (
	"context"
	"encoding/json"
	"fmt"
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

// storeRead is what one read of the store found.
type storeRead struct {
	namespaces []longterm.Namespace
	ns         longterm.Namespace // the namespace whose items are listed
	items      []longterm.Item
}

// storePanel shows a long-term store. Its reads go through load (the
// studio's background work); lt nil shows why there is nothing.
type storePanel struct {
	widget.BaseWidget
	load func(work func() (storeRead, error), apply func(storeRead, error))

	lt     longterm.Store
	why    string // shown when lt is nil
	read   storeRead
	filter longterm.Filter
	sel    int // the selected item, -1 for none

	status  *widget.Label
	filterE *widget.Entry
	refresh *widget.Button
	nsPick  *widget.Select // the namespaces
	itList  *widget.List
	value   *widget.Label
	facts   *widget.Label
	body    fyne.CanvasObject
	empty   *widget.Label
}

func newStorePanel(load func(func() (storeRead, error), func(storeRead, error))) *storePanel {
	p := &storePanel{load: load, sel: -1}
	p.status = mutedLabel("")
	p.filterE = widget.NewEntry()
	p.filterE.SetPlaceHolder(`filter on values, as JSON (Enter): {"preference": "I prefer euros"}`)
	p.filterE.OnSubmitted = func(string) { p.applyFilter() }
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
	p.empty = placeholder("")
	p.status.SizeName = theme.SizeNameCaptionText
	// The namespace picker gets room for a namespace of three labels.
	pick := container.NewGridWrap(fyne.NewSize(300, p.nsPick.MinSize().Height), p.nsPick)
	top := container.NewBorder(nil, nil, pick, p.refresh, p.filterE)
	detail := container.NewVScroll(container.NewVBox(p.facts, p.value))
	split := container.NewHSplit(p.itList, detail)
	split.Offset = 0.45
	p.body = container.NewBorder(container.NewVBox(top, p.status), nil, nil, nil, split)
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
	p.read, p.sel = storeRead{}, -1
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
// when ns is nil) off the UI goroutine.
func (p *storePanel) reload(ns longterm.Namespace) {
	lt, filter := p.lt, p.filter
	if lt == nil {
		return
	}
	p.status.SetText("Reading the store…")
	p.load(func() (storeRead, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
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
			r.items, err = lt.Search(ctx, longterm.SearchQuery{Prefix: r.ns, Filter: filter, Limit: storeListLimit, NoRefresh: true})
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

// summary says what the panel lists.
func (p *storePanel) summary() string {
	r := p.read
	if len(r.namespaces) == 0 {
		return "No items yet: a node puts them through engine.RuntimeOf(ctx).Store, and they stay across threads."
	}
	s := fmt.Sprintf("%s · %s in %s", plural(len(r.namespaces), "namespace"), plural(len(r.items), "item"), r.ns)
	if len(r.items) == storeListLimit {
		s += fmt.Sprintf(" (the newest %d)", storeListLimit)
	}
	if p.filter != nil {
		s += " matching the filter"
	}
	return s
}

// showItem shows the selected item's value and facts.
func (p *storePanel) showItem() {
	if p.sel < 0 || p.sel >= len(p.read.items) {
		p.facts.SetText("")
		p.value.SetText("")
		return
	}
	it := p.read.items[p.sel]
	facts := []string{it.Namespace.String() + " · " + it.Key, "created " + it.CreatedAt.Local().Format(time.DateTime),
		"updated " + it.UpdatedAt.Local().Format(time.DateTime)}
	if it.TTL > 0 {
		facts = append(facts, fmt.Sprintf("expires %s unless read (TTL %v)", it.ExpiresAt.Local().Format(time.DateTime), it.TTL))
	} else {
		facts = append(facts, "never expires")
	}
	p.facts.SetText(strings.Join(facts, "\n"))
	b, err := json.MarshalIndent(it.Value, "", "  ")
	if err != nil {
		p.value.SetText("The value cannot be shown: " + err.Error())
		return
	}
	p.value.SetText(oneLineCap(string(b)))
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
	row := it.Key + " · updated " + it.UpdatedAt.Local().Format("Jan 2 15:04:05")
	if it.TTL > 0 {
		row += " · expires " + it.ExpiresAt.Local().Format("Jan 2 15:04")
	}
	return row
}
